package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"

	"github.com/wirespeed-io/wirespeed/agent/internal/boundedfile"
	"sigs.k8s.io/yaml"
)

// kubeconfig is the part of a kubeconfig file the agent understands: the current context's cluster and a
// token or client certificate. client-go's clientcmd would read every variant but adds about 3 MB (and
// spf13/pflag) to a binary that runs on every node; the agent reads its in-cluster service account in
// production and a kubeconfig only in development and tests.
type kubeconfig struct {
	CurrentContext string `json:"current-context"`
	Contexts       []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster string `json:"cluster"`
			User    string `json:"user"`
		} `json:"context"`
	} `json:"contexts"`
	Clusters []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server                   string `json:"server"`
			CertificateAuthority     string `json:"certificate-authority"`
			CertificateAuthorityData []byte `json:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify"`
			TLSServerName            string `json:"tls-server-name"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			ClientCertificate     string         `json:"client-certificate"`
			ClientCertificateData []byte         `json:"client-certificate-data"`
			ClientKey             string         `json:"client-key"`
			ClientKeyData         []byte         `json:"client-key-data"`
			Token                 string         `json:"token"`
			TokenFile             string         `json:"tokenFile"`
			Exec                  map[string]any `json:"exec"`
			AuthProvider          map[string]any `json:"auth-provider"`
		} `json:"user"`
	} `json:"users"`
}

// maxKubeconfigBytes caps the kubeconfig file (wirespeed's choice): one with hundreds of contexts and inline
// certificates is well under 1 MiB.
const maxKubeconfigBytes = 16 << 20

// loadKubeconfig builds a rest.Config from the current context of a kubeconfig file.
func loadKubeconfig(path string) (*rest.Config, error) {
	data, err := boundedfile.Read(path, maxKubeconfigBytes)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig: %w", err)
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return nil, fmt.Errorf("parse kubeconfig %s: %w", path, err)
	}
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(filepath.Dir(path), p)
	}
	var clusterName, userName string
	found := false
	for _, c := range kc.Contexts {
		if c.Name == kc.CurrentContext {
			clusterName, userName, found = c.Context.Cluster, c.Context.User, true
		}
	}
	if !found {
		return nil, fmt.Errorf("kubeconfig %s: current-context %q not found", path, kc.CurrentContext)
	}
	cfg := &rest.Config{}
	found = false
	for _, c := range kc.Clusters {
		if c.Name == clusterName {
			found = true
			cfg.Host = c.Cluster.Server
			cfg.TLSClientConfig.CAFile = rel(c.Cluster.CertificateAuthority)
			cfg.TLSClientConfig.CAData = c.Cluster.CertificateAuthorityData
			cfg.TLSClientConfig.Insecure = c.Cluster.InsecureSkipTLSVerify
			cfg.TLSClientConfig.ServerName = c.Cluster.TLSServerName
		}
	}
	if !found || cfg.Host == "" {
		return nil, fmt.Errorf("kubeconfig %s: cluster %q not found or has no server", path, clusterName)
	}
	for _, u := range kc.Users {
		if u.Name != userName {
			continue
		}
		if u.User.Exec != nil || u.User.AuthProvider != nil {
			return nil, errors.New("kubeconfig user uses exec or auth-provider, which the agent does not support: use a token or a client certificate")
		}
		cfg.TLSClientConfig.CertFile = rel(u.User.ClientCertificate)
		cfg.TLSClientConfig.CertData = u.User.ClientCertificateData
		cfg.TLSClientConfig.KeyFile = rel(u.User.ClientKey)
		cfg.TLSClientConfig.KeyData = u.User.ClientKeyData
		cfg.BearerToken = u.User.Token
		cfg.BearerTokenFile = rel(u.User.TokenFile)
	}
	return cfg, nil
}
