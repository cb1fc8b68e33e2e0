module github.com/wirespeed-io/wirespeed/agent/image

go 1.26.8

require (
	github.com/BurntSushi/toml v1.5.0
	github.com/google/go-containerregistry v0.22.1
	github.com/wirespeed-io/wirespeed/agent v0.0.0-00010101000000-000000000000
	golang.org/x/mod v0.41.0
	sigs.k8s.io/yaml v1.6.0
)

require (
	github.com/safchain/ethtool v0.7.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/vishvananda/netlink v1.3.1 // indirect
	github.com/vishvananda/netns v0.0.5 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	golang.org/x/text v0.42.0 // indirect
)

require (
	github.com/docker/cli v29.7.2+incompatible // indirect
	github.com/docker/docker-credential-helpers v0.9.3 // indirect
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/sirupsen/logrus v1.9.4 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	gotest.tools/v3 v3.5.2 // indirect
)

// The tests run the agent's own network-namespace gate and read its status report type.
replace github.com/wirespeed-io/wirespeed/agent => ../
