// A new AKS cluster on Dsv6 (MANA) pools, from TypeScript: the component examples/aks-dsv6 builds in Python,
// through the wirespeed Pulumi package's generated SDK (@pulumi/wirespeed, sdk/nodejs in the wirespeed repository).
//
// Workload: the api pool calls one payment provider at up to `connectionsPerSecond` new connections/s per node at
// peak. The component turns that into explicit allocatedOutboundPorts (never Azure's shrinking default) and
// creates as many static, zone-redundant public IPs as every pool needs at maxCount + surge. The resource group
// exists already (its name is stack config), so the program needs no other Pulumi package.
import * as pulumi from "@pulumi/pulumi";
import * as wirespeed from "@pulumi/wirespeed";

const config = new pulumi.Config();
const zones = ["1", "2", "3"];

const cluster = new wirespeed.NetworkOptimizedCluster("dsv6", {
    resourceGroupName: config.require("resourceGroupName"),
    location: config.require("location"),
    systemPool: { name: "system", vmSize: "Standard_D4s_v6", minCount: 2, maxCount: 3, maxSurge: "1", zones },
    pools: [
        // Latency-sensitive API: 12.5 Gb/s MANA nodes, the throughput profile (RX ring 8,192, backlog 32,768).
        {
            name: "api",
            vmSize: "Standard_D16s_v6",
            minCount: 3,
            maxCount: config.requireNumber("apiMaxNodes"),
            maxSurge: "10%",
            zones,
            profile: "throughput",
            labels: { workload: "api" },
        },
    ],
    outbound: {
        connectionsPerSecond: config.requireNumber("connectionsPerSecond"),
        ipMode: "created",
        idleTimeoutMinutes: 10,
    },
    snatAlert: { thresholdPercent: 80 },
});

export const clusterName = cluster.clusterName;
export const outboundIpAddresses = cluster.outboundIpAddresses;
export const allocatedOutboundPorts = cluster.allocatedOutboundPorts;
export const outboundIpCount = cluster.outboundIpCount;
export const replaceOnChange = cluster.replaceOnChange;
export const kubeconfig = pulumi.secret(cluster.kubeconfig);
