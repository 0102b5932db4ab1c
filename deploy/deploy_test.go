package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/parselbox/parselbox/host/config"
	"github.com/parselbox/parselbox/host/mcpserver"
	"github.com/parselbox/parselbox/host/metrics"
)

// decode reads a manifest strictly: an unknown or misspelt field fails.
func decode(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// kustomization is the part of kustomization.yaml the test reads.
type kustomization struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Labels     []map[string]any `json:"labels"`
	Resources  []string         `json:"resources"`
	Images     []map[string]any `json:"images"`
}

func TestKubernetesBase(t *testing.T) {
	dir := "kubernetes"
	var k kustomization
	decode(t, filepath.Join(dir, "kustomization.yaml"), &k)
	if k.Kind != "Kustomization" {
		t.Errorf("kustomization.yaml: kind %q", k.Kind)
	}
	// Every manifest of the directory is a resource, and every resource
	// is there.
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	var manifests []string
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" {
			manifests = append(manifests, b)
		}
	}
	slices.Sort(manifests)
	res := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(res, manifests) {
		t.Errorf("resources %v, files %v", res, manifests)
	}

	var (
		cm     corev1.ConfigMap
		secret corev1.Secret
		dep    appsv1.Deployment
		svc    corev1.Service
		hpa    autoscalingv2.HorizontalPodAutoscaler
		pdb    policyv1.PodDisruptionBudget
	)
	for name, into := range map[string]any{
		"configmap.yaml": &cm, "secret.yaml": &secret, "deployment.yaml": &dep,
		"service.yaml": &svc, "hpa.yaml": &hpa, "pdb.yaml": &pdb,
	} {
		decode(t, filepath.Join(dir, name), into)
	}
	for obj, kind := range map[string]string{
		cm.Kind: "ConfigMap", secret.Kind: "Secret", dep.Kind: "Deployment", svc.Kind: "Service",
		hpa.Kind: "HorizontalPodAutoscaler", pdb.Kind: "PodDisruptionBudget",
	} {
		if obj != kind {
			t.Errorf("kind %q, want %q", obj, kind)
		}
	}

	// The configuration in the ConfigMap is one parselbox accepts.
	hcl, ok := cm.Data["parselbox.hcl"]
	if !ok {
		t.Fatal("configmap.yaml: no parselbox.hcl")
	}
	// ... with the token the Secret gives it in $PARSELBOX_AUTH_TOKEN.
	token := config.Layer{
		Provider: func(*koanf.Koanf) koanf.Provider {
			return confmap.Provider(map[string]any{"server": map[string]any{"auth_token": secret.StringData["auth-token"]}}, "")
		},
		Flag: func([]string) string { return "$" + mcpserver.AuthTokenEnv },
	}
	file, err := config.ParseFile("parselbox.hcl", []byte(hcl), token)
	if err != nil {
		t.Fatalf("the ConfigMap's parselbox.hcl: %v", err)
	}
	srv := file.Server
	if srv.Transport != "http" || srv.Host != "0.0.0.0" || strings.Contains(hcl, "auth_token =") {
		t.Errorf("server block: %+v (the token comes from the Secret)", srv)
	}

	spec := dep.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	// SIGTERM drains for up to drain_timeout: the grace period must be
	// longer.
	grace := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
	if srv.DrainTimeout <= 0 || grace < srv.DrainTimeout+10*time.Second {
		t.Errorf("terminationGracePeriodSeconds %v vs drain_timeout %v", grace, srv.DrainTimeout)
	}
	if len(c.Ports) != 1 || int(c.Ports[0].ContainerPort) != srv.Port {
		t.Errorf("container ports %+v, server port %d", c.Ports, srv.Port)
	}
	for probe, want := range map[*corev1.Probe]string{
		c.StartupProbe: mcpserver.HealthPath, c.LivenessProbe: mcpserver.HealthPath, c.ReadinessProbe: mcpserver.ReadyPath,
	} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want || probe.HTTPGet.Port.String() != c.Ports[0].Name {
			t.Errorf("probe %+v, want GET %s on %s", probe, want, c.Ports[0].Name)
		}
	}
	var tokenFromSecret bool
	for _, e := range c.Env {
		if e.Name == mcpserver.AuthTokenEnv && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
			e.ValueFrom.SecretKeyRef.Name == secret.Name {
			_, tokenFromSecret = secret.StringData[e.ValueFrom.SecretKeyRef.Key]
		}
	}
	if !tokenFromSecret {
		t.Errorf("$%s does not come from the Secret's key", mcpserver.AuthTokenEnv)
	}
	if tok := secret.StringData["auth-token"]; len(tok) < mcpserver.MinTokenLength {
		t.Errorf("the Secret's placeholder token is shorter than %d", mcpserver.MinTokenLength)
	}
	// Security context: no root, no privilege escalation, no capabilities,
	// the runtime's seccomp profile under parselbox's own.
	psc, sc := spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v", psc)
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context %+v", sc)
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v", c.Resources)
	}
	if file.Config.Confinement == "required" {
		t.Error(`confinement = "required" cannot hold without root (no cgroup, no uid switch)`)
	}

	// The Service reaches the container's port and keeps not-ready pods.
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != c.Ports[0].Name || !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("service %+v", svc.Spec)
	}
	// The HPA scales the Deployment on a metric parselbox serves.
	if hpa.Spec.ScaleTargetRef.Name != dep.Name || len(hpa.Spec.Metrics) != 1 || hpa.Spec.Metrics[0].Pods == nil ||
		hpa.Spec.Metrics[0].Pods.Metric.Name != metrics.Namespace+"_sessions_open" {
		t.Errorf("hpa %+v", hpa.Spec)
	}
	if pdb.Spec.MaxUnavailable == nil && pdb.Spec.MinAvailable == nil {
		t.Error("the PodDisruptionBudget allows nothing")
	}
}

func TestGatewayRoute(t *testing.T) {
	var route gatewayv1.HTTPRoute
	decode(t, filepath.Join("gateway-api", "httproute.yaml"), &route)
	if route.Kind != "HTTPRoute" || len(route.Spec.Rules) != 1 {
		t.Fatalf("route %+v", route)
	}
	rule := route.Spec.Rules[0]
	sp := rule.SessionPersistence
	if sp == nil || sp.SessionName == nil || *sp.SessionName != "Mcp-Session-Id" || sp.Type == nil || *sp.Type != gatewayv1.HeaderBasedSessionPersistence {
		t.Errorf("session persistence %+v", sp)
	}
	var svc corev1.Service
	decode(t, filepath.Join("kubernetes", "service.yaml"), &svc)
	if len(rule.BackendRefs) != 1 || string(rule.BackendRefs[0].Name) != svc.Name ||
		rule.BackendRefs[0].Port == nil || int32(*rule.BackendRefs[0].Port) != svc.Spec.Ports[0].Port {
		t.Errorf("backend %+v, service %s:%d", rule.BackendRefs, svc.Name, svc.Spec.Ports[0].Port)
	}
}

// The Envoy configuration names the session header and the readiness path
// (no Envoy here to load it: see envoy.yaml).
func TestEnvoyConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("envoy", "envoy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("envoy.yaml: %v", err)
	}
	for _, want := range []string{"header: {name: Mcp-Session-Id}", "path: " + mcpserver.ReadyPath, "envoy.http.stateful_session.envelope"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("envoy.yaml lacks %q", want)
		}
	}
}
