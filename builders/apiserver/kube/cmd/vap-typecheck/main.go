// Command vap-typecheck checks ValidatingAdmissionPolicies offline, with this Kubernetes release's own code:
//
//   - typeChecking: what kube-controller-manager's validatingadmissionpolicy-status-controller would write to the
//     policy's status.typeChecking (the same TypeChecker over the built-in types' OpenAPI schemas,
//     k8s.io/kubernetes cmd/kube-controller-manager/app/validatingadmissionpolicystatus.go). The test fixture runs
//     no controller-manager, so the tests run this instead.
//   - compile: every expression compiled as an API server of an older release compiles a new policy on create
//     (k8s.io/kubernetes pkg/apis/admissionregistration/validation: variables in order, then validations,
//     messageExpressions and matchConditions) in the CEL environment of the given compatibility version. A
//     Kubernetes 1.N API server checks new expressions against 1.(N-1) (environment.DefaultCompatibilityVersion),
//     so `-compat 1.29` is what a 1.30 API server accepts. The environments are versioned option tables that
//     only grow, so a library of this release rebuilds an older one.
//
// Usage: vap-typecheck [-compat 1.29] < policies.yaml (multi-document YAML; other kinds are skipped). Prints
// {"<policy>": {"typeChecking": [{"fieldRef", "warning"}], "compile": [{"field", "error"}]}} as JSON.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	validating "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	k8sscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/generated/openapi"
)

type result struct {
	TypeChecking []admissionregistrationv1.ExpressionWarning `json:"typeChecking"`
	Compile      []compileError                              `json:"compile"`
}

type compileError struct {
	Field string `json:"field"`
	Error string `json:"error"`
}

func main() {
	compat := flag.String("compat", "", "also compile every expression as new in this CEL compatibility version (e.g. 1.29)")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *compat); err != nil {
		fmt.Fprintln(os.Stderr, "vap-typecheck:", err)
		os.Exit(2)
	}
}

func run(in io.Reader, out io.Writer, compat string) error {
	checker := &validating.TypeChecker{
		SchemaResolver: resolver.NewDefinitionsSchemaResolver(openapi.GetOpenAPIDefinitions, k8sscheme.Scheme),
		RestMapper:     testrestmapper.TestOnlyStaticRESTMapper(k8sscheme.Scheme),
	}
	var env *environment.EnvSet
	if compat != "" {
		v, err := utilversion.ParseMajorMinor(compat)
		if err != nil {
			return fmt.Errorf("-compat %q: %w", compat, err)
		}
		env = environment.MustBaseEnvSet(v)
	}
	results := map[string]result{}
	decoder := utilyaml.NewYAMLOrJSONDecoder(in, 4096)
	for {
		var policy admissionregistrationv1.ValidatingAdmissionPolicy
		if err := decoder.Decode(&policy); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
		if policy.Kind != "ValidatingAdmissionPolicy" {
			continue
		}
		r := result{TypeChecking: checker.Check(&policy), Compile: []compileError{}}
		if r.TypeChecking == nil {
			r.TypeChecking = []admissionregistrationv1.ExpressionWarning{}
		}
		if env != nil {
			errs, err := compile(env, &policy.Spec)
			if err != nil {
				return err
			}
			r.Compile = errs
		}
		results[policy.Name] = r
	}
	encoder := json.NewEncoder(out)
	encoder.SetIndent("", "  ")
	return encoder.Encode(results)
}

// compile compiles the policy's expressions as the API server's create validation does, in env's compatibility
// version (environment.NewExpressions).
func compile(env *environment.EnvSet, spec *admissionregistrationv1.ValidatingAdmissionPolicySpec) ([]compileError, error) {
	composited, err := plugincel.NewCompositedCompiler(env)
	if err != nil {
		return nil, err
	}
	withParams := spec.ParamKind != nil
	errs := []compileError{}
	check := func(field string, r plugincel.CompilationResult) {
		if r.Error != nil {
			errs = append(errs, compileError{Field: field, Error: r.Error.Error()})
		}
	}
	options := plugincel.OptionalVariableDeclarations{HasParams: withParams, HasAuthorizer: true}
	for i, v := range spec.Variables {
		variable := &validating.Variable{Name: v.Name, Expression: v.Expression}
		check(fmt.Sprintf("spec.variables[%d].expression", i), composited.CompileAndStoreVariable(variable, options, environment.NewExpressions))
	}
	for i, v := range spec.Validations {
		check(fmt.Sprintf("spec.validations[%d].expression", i),
			composited.CompileCELExpression(&validating.ValidationCondition{Expression: v.Expression}, options, environment.NewExpressions))
		if v.MessageExpression != "" {
			messageOptions := plugincel.OptionalVariableDeclarations{HasParams: withParams, HasAuthorizer: false}
			check(fmt.Sprintf("spec.validations[%d].messageExpression", i),
				composited.CompileCELExpression(&validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}, messageOptions, environment.NewExpressions))
		}
	}
	stateless := plugincel.NewCompiler(env)
	for i, m := range spec.MatchConditions {
		condition := matchconditions.MatchCondition(m)
		check(fmt.Sprintf("spec.matchConditions[%d].expression", i), stateless.CompileCELExpression(&condition, options, environment.NewExpressions))
	}
	return errs, nil
}
