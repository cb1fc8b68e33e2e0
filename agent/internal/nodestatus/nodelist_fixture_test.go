package nodestatus

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fleetNode is Node i of a fleet as a kubelet on AKS reports it, built with the corev1 types so the JSON has
// the real shape: the labels AKS and the kubelet set ("Use labels in an AKS cluster",
// https://learn.microsoft.com/azure/aks/use-labels, and the well-known labels,
// https://kubernetes.io/docs/reference/labels-annotations-taints/), annotations of the kubelet, CSI, the
// cluster autoscaler and the agent, managedFields, five conditions, capacity and allocatable, nodeInfo and 25
// images (a kubelet reports at most 50: nodeStatusMaxImages). Pools rotate over AKS, EKS and Karpenter labels
// and zones over three; every 97th Node has no InternalIP, as a Node whose cloud provider has not yet set its
// addresses. Its JSON is about 9.4 KiB.
func fleetNode(i int) corev1.Node {
	name := fmt.Sprintf("aks-net-%05d-vmss%06d", i/1000, i)
	zone := fmt.Sprintf("westeurope-%d", i%3+1)
	labels := map[string]string{
		"agentpool": "net", "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": "Standard_D16ds_v6",
		"beta.kubernetes.io/os": "linux", "failure-domain.beta.kubernetes.io/region": "westeurope",
		"failure-domain.beta.kubernetes.io/zone": zone, "kubernetes.azure.com/cluster": "MC_rg_net_westeurope",
		"kubernetes.azure.com/mode": "user", "kubernetes.azure.com/node-image-version": "AKSUbuntu-2204gen2containerd-202611.04.0",
		"kubernetes.azure.com/os-sku": "Ubuntu", "kubernetes.azure.com/role": "agent", "kubernetes.io/arch": "amd64",
		"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "Standard_D16ds_v6",
		"topology.kubernetes.io/region": "westeurope", ZoneLabel: zone, "topology.disk.csi.azure.com/zone": zone,
	}
	labels[PoolLabels[i%len(PoolLabels)]] = fmt.Sprintf("pool%d", i%7)
	annotations := map[string]string{
		"csi.volume.kubernetes.io/nodeid":                         fmt.Sprintf(`{"disk.csi.azure.com":"%s","file.csi.azure.com":"%s"}`, name, name),
		"node.alpha.kubernetes.io/ttl":                            "0",
		"volumes.kubernetes.io/controller-managed-attach-detach":  "true",
		"kubernetes.azure.com/vmss-instance-id":                   fmt.Sprint(i),
		"wirespeed.io/tuning-status":                              `{"profile":"throughput","state":"applied","reason":"all settings applied"}`,
		"node.kubernetes.io/exclude-from-external-load-balancers": "false",
		"cluster-autoscaler.kubernetes.io/scale-down-disabled":    "false",
		"kubeadm.alpha.kubernetes.io/cri-socket":                  "unix:///run/containerd/containerd.sock",
		"example.com/owner":                                       "platform-team",
		"example.com/cost-centre":                                 "net-1234",
	}
	now := metav1.NewTime(time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC))
	var conditions []corev1.NodeCondition
	for _, c := range []struct{ t, s, reason, msg string }{
		{"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
		{"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
		{"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
		{"Ready", "True", "KubeletReady", "kubelet is posting ready status"},
		{"NetworkTuningDegraded", "False", "TuningApplied", "all settings applied"},
	} {
		conditions = append(conditions, corev1.NodeCondition{Type: corev1.NodeConditionType(c.t),
			Status: corev1.ConditionStatus(c.s), Reason: c.reason, Message: c.msg, LastHeartbeatTime: now, LastTransitionTime: now})
	}
	var images []corev1.ContainerImage
	for n := range 25 {
		digest := fmt.Sprintf("%064x", n*7919+i)
		images = append(images, corev1.ContainerImage{SizeBytes: int64(10_000_000 + n),
			Names: []string{fmt.Sprintf("mcr.microsoft.com/oss/kubernetes/app-%d@sha256:%s", n, digest),
				fmt.Sprintf("mcr.microsoft.com/oss/kubernetes/app-%d:v1.%d.0", n, n)}})
	}
	addresses := []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name},
		{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.%d.%d.%d", 224+i/65536, i/256%256, i%256)}}
	if i%97 == 96 {
		addresses = addresses[:1]
	}
	resources := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"),
		corev1.ResourceMemory: resource.MustParse("65843676Ki"), corev1.ResourcePods: resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("129886128Ki")}
	return corev1.Node{
		TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(fmt.Sprintf("3f9b2c1e-0000-4000-8000-%012d", i)),
			ResourceVersion: fmt.Sprint(100000 + i), CreationTimestamp: now, Labels: labels, Annotations: annotations,
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now,
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{".":{},"f:node.alpha.kubernetes.io/ttl":{},"f:volumes.kubernetes.io/controller-managed-attach-detach":{}},"f:labels":{".":{},"f:agentpool":{},"f:kubernetes.io/arch":{},"f:kubernetes.io/hostname":{},"f:kubernetes.io/os":{}}},"f:spec":{"f:providerID":{}}}`)}},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now,
					Subresource: "status", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{"k:{\"type\":\"DiskPressure\"}":{"f:lastHeartbeatTime":{}},"k:{\"type\":\"MemoryPressure\"}":{"f:lastHeartbeatTime":{}},"k:{\"type\":\"PIDPressure\"}":{"f:lastHeartbeatTime":{}},"k:{\"type\":\"Ready\"}":{"f:lastHeartbeatTime":{},"f:message":{},"f:reason":{},"f:status":{}}},"f:images":{},"f:nodeInfo":{"f:bootID":{}}}}`)}},
			}},
		Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.244.%d.0/24", i%256), PodCIDRs: []string{fmt.Sprintf("10.244.%d.0/24", i%256)},
			ProviderID: fmt.Sprintf("azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/mc_rg_net_westeurope/providers/Microsoft.Compute/virtualMachineScaleSets/aks-net-vmss/virtualMachines/%d", i)},
		Status: corev1.NodeStatus{Capacity: resources, Allocatable: resources, Conditions: conditions, Addresses: addresses,
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{MachineID: fmt.Sprintf("%032x", i), SystemUUID: fmt.Sprintf("%032x", i+1),
				BootID: fmt.Sprintf("%032x", i+2), KernelVersion: "5.15.0-1074-azure", OSImage: "Ubuntu 22.04.5 LTS",
				ContainerRuntimeVersion: "containerd://1.7.23-1", KubeletVersion: "v1.31.2", KubeProxyVersion: "v1.31.2",
				OperatingSystem: "linux", Architecture: "amd64"},
			Images: images},
	}
}

// fleetNodeList is the JSON of a NodeList of count fleetNodes, as the API server sends it.
func fleetNodeList(tb testing.TB, count int) []byte {
	tb.Helper()
	list := corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"},
		ListMeta: metav1.ListMeta{ResourceVersion: "123456"}}
	for i := range count {
		list.Items = append(list.Items, fleetNode(i))
	}
	b, err := json.Marshal(list)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// wantInfo is what List must return for fleetNode(i), worked out from how fleetNode builds it.
func wantInfo(i int) NodeInfo {
	n := NodeInfo{Name: fmt.Sprintf("aks-net-%05d-vmss%06d", i/1000, i), Zone: fmt.Sprintf("westeurope-%d", i%3+1),
		Pool: fmt.Sprintf("pool%d", i%7)}
	if i%97 != 96 {
		n.InternalIP = fmt.Sprintf("10.%d.%d.%d", 224+i/65536, i/256%256, i%256)
	}
	return n
}
