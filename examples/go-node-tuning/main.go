// The wirespeed node agent on a Kubernetes cluster, from Go: the NodeTuning component through the wirespeed Pulumi
// package's generated SDK (sdk/go in the wirespeed repository, module github.com/wirespeed-io/wirespeed/sdk/go).
//
// One DaemonSet per profile, on the nodes labelled wirespeed.io/profile=<name>, with the agent's RBAC, its
// admission policy (Kubernetes 1.30+) and a PodMonitor. The cluster is the one the kubeconfig in use selects (the
// kubernetes provider's default); pass pulumi.Provider(...) to target one created in the same program.
package main

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
	"github.com/wirespeed-io/wirespeed/sdk/go/wirespeed"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")
		profiles := []interface{}{"throughput"}
		var image *string
		if value := cfg.Get("agentImage"); value != "" {
			image = &value // the agent image you pushed (make image, make push); empty: the documented default
		}
		tuning, err := wirespeed.NewNodeTuning(ctx, "tuning", &wirespeed.NodeTuningArgs{
			Profiles:   profiles,
			PodMonitor: pulumi.BoolRef(cfg.GetBool("podMonitor")),
			Image:      image,
		})
		if err != nil {
			return err
		}
		ctx.Export("namespace", tuning.Namespace)
		ctx.Export("daemonSetNames", tuning.DaemonSetNames)
		return nil
	})
}
