// NodeTuning from TypeScript under the real engine: the same component examples/go-node-tuning and
// examples/yaml-node-tuning use, through the generated SDK (sdk/nodejs).
import * as pulumi from "@pulumi/pulumi";
import * as wirespeed from "@pulumi/wirespeed";

const config = new pulumi.Config();
const tuning = new wirespeed.NodeTuning("tuning", {
    profiles: config.getObject<string[]>("profiles") ?? ["throughput"],
    podMonitor: false,
});

export const namespace = tuning.namespace;
export const daemonSetNames = tuning.daemonSetNames;
