// Package deploy holds the recipes for running many parselbox hosts, and
// the tests that check them (it has no code of its own):
//
//   - haproxy/haproxy.cfg: HAProxy with session affinity on Mcp-Session-Id,
//     /readyz health checks and draining (run for real by the fleet test,
//     tests/fleet, `make fleet-test`);
//   - envoy/envoy.yaml: the same with Envoy's stateful session filter;
//   - gateway-api/httproute.yaml: a Gateway API HTTPRoute with header-based
//     session persistence;
//   - kubernetes/: a kustomize base (Deployment, Service, ConfigMap, Secret,
//     HorizontalPodAutoscaler, PodDisruptionBudget).
//
// The tests decode every Kubernetes manifest strictly into the k8s.io/api
// and Gateway API types, parse the ConfigMap's parselbox.hcl with
// host/config, and check that the pieces agree with each other and with
// the server (ports, probe paths, drain timeout vs grace period, metric
// names).
package deploy
