package tftest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Fake Azure identity for offline azurerm plans. The azurerm provider acquires a token while it is configured,
// before any plan, and parses the caller's object and tenant ids out of it ("building account"); a plan of new
// resources makes no other Azure call once resource provider registration is off. Managed identity is the one
// credential whose endpoint the provider lets us choose (ARM_MSI_ENDPOINT): this serves it, the Azure Instance
// Metadata Service token protocol (learn.microsoft.com/entra/identity/managed-identities-azure-resources/
// how-to-use-vm-token, "Get a token using HTTP"), with an unsigned token. Nothing can be applied with it: ARM is
// unreachable here, and a plan is all the tests ask of it.

// Fake ids (all zeros and ones) so plans never carry anything that looks like a real subscription.
const (
	FakeSubscription = "00000000-0000-0000-0000-000000000000"
	FakeTenant       = "00000000-0000-0000-0000-000000000000"
	fakeObject       = "11111111-1111-1111-1111-111111111111"
)

// AzureIdentity starts the fake token endpoint (stopped with the test) and returns the environment that makes
// azurerm use it.
func AzureIdentity(t testing.TB) map[string]string {
	t.Helper()
	segment := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().Unix()
		token := segment(map[string]string{"alg": "none", "typ": "JWT"}) + "." + segment(map[string]any{
			"oid": fakeObject, "tid": FakeTenant, "aud": r.URL.Query().Get("resource"), "iat": now, "exp": now + 3600,
		}) + ".unsigned"
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{
			"access_token": token, "token_type": "Bearer", "resource": r.URL.Query().Get("resource"),
			"expires_in": "3600", "expires_on": jsonInt(now + 3600), "not_before": jsonInt(now),
		})
	}))
	t.Cleanup(server.Close)
	return map[string]string{
		"ARM_USE_MSI":                         "true",
		"ARM_MSI_ENDPOINT":                    server.URL + "/metadata/identity/oauth2/token",
		"ARM_SUBSCRIPTION_ID":                 FakeSubscription,
		"ARM_TENANT_ID":                       FakeTenant,
		"ARM_RESOURCE_PROVIDER_REGISTRATIONS": "none",
	}
}

func jsonInt(v int64) string { b, _ := json.Marshal(v); return string(b) }
