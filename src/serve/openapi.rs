//! `GET /openapi.json`: OpenAPI 3.1 description of every route, its parameters, bodies
//! and answers. The instance and decision schemas name their required keys and point to
//! the contract (`shared/spec/instance-format.md`) for the rest; the extender bodies are
//! those of `k8s.io/kube-scheduler/extender/v1` with their Go field names.

use serde_json::{json, Value};

fn error_response(what: &str) -> Value {
    json!({"description": what, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

fn json_content(schema: Value) -> Value {
    json!({"application/json": {"schema": schema}})
}

fn body(schema: Value, yaml: bool) -> Value {
    let mut c = json_content(schema.clone());
    if yaml {
        c["application/yaml"] = json!({"schema": schema});
    }
    json!({"required": true, "content": c})
}

fn ok(schema: Value) -> Value {
    json!({"description": "OK", "content": json_content(schema)})
}

fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn solve_errors(mut responses: Value) -> Value {
    responses["400"] = error_response("Bad input: `error` names the path of the bad field (`nodes[3].allocatable.memory: …`)");
    responses["401"] = error_response("Authentication required (client certificate or bearer token), when configured");
    responses["408"] = error_response("The body was not received within the read timeout");
    responses["413"] = error_response("The body is larger than the limit");
    responses["503"] = json!({
        "description": "Saturated (solves running and queued at their limits) or shutting down",
        "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait"}},
        "content": json_content(r("Error")),
    });
    responses
}

/// The document.
pub fn document() -> Value {
    let limit_headers = json!({
        "tessera-time-limit": {"schema": {"type": "string"}, "description": "The time limit the solve ran with, e.g. `2000ms`"},
        "tessera-time-limit-clamped": {"schema": {"type": "string"}, "description": "`true` when the asked limit exceeded the server's maximum"},
    });
    let extender_args = r("ExtenderArgs");
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Tessera placement oracle",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Exact gang, topology and preemption-aware placement for one scheduling cycle, and a kube-scheduler extender. Formats: shared/spec/instance-format.md; user guide: docs/serve.md.",
        },
        "paths": {
            "/v1/solve": {"post": {
                "summary": "Decide one cycle",
                "parameters": [
                    {"name": "solver", "in": "query", "schema": {"type": "string", "default": "exact"}, "description": "A solver of `tessera solve --list-solvers`"},
                    {"name": "timeLimit", "in": "query", "schema": {"type": "string", "example": "2s"}, "description": "Budget (else the instance's options.timeLimit, else the server default); clamped to the server maximum"},
                    {"name": "gap", "in": "query", "schema": {"type": "number", "minimum": 0, "maximum": 1}, "description": "Relative gap at which the exact engine may stop"},
                ],
                "requestBody": body(r("Instance"), true),
                "responses": solve_errors(json!({"200": {"description": "The decision", "headers": limit_headers, "content": json_content(r("Decision"))}})),
            }},
            "/v1/check": {"post": {
                "summary": "Validate a decision against an instance (hard rules, objective terms 1-3)",
                "requestBody": body(json!({"type": "object", "required": ["instance", "decision"], "additionalProperties": false,
                    "properties": {"instance": r("Instance"), "decision": r("Decision")}}), true),
                "responses": solve_errors(json!({"200": ok(r("CheckReport"))})),
            }},
            "/v1/compare": {"post": {
                "summary": "Run several solvers on the same instances and compare them with the exact solver",
                "requestBody": body(json!({"type": "object", "required": ["instances"], "additionalProperties": false, "properties": {
                    "instances": {"type": "object", "additionalProperties": r("Instance"), "description": "Instances by name"},
                    "solvers": {"type": "array", "items": {"type": "string"}, "description": "Default: every solver"},
                    "timeLimit": {"type": "string", "description": "Budget per solve, clamped to the server maximum"}}}), true),
                "responses": solve_errors(json!({"200": ok(r("CompareReport"))})),
            }},
            "/v1/cluster": {
                "post": {
                    "summary": "Replace the extender's cluster view with `kubectl get … -o json|yaml` output (a List or objects) and plan it",
                    "requestBody": body(json!({"type": "object", "description": "A Kubernetes List or object (docs/kube-import.md)"}), true),
                    "responses": solve_errors(json!({"200": ok(r("ClusterSummary"))})),
                },
                "get": {"summary": "The cluster view and the state of its plan",
                        "responses": {"200": ok(r("ClusterSummary")), "404": error_response("No view pushed yet")}},
            },
            "/v1/plan": {"get": {"summary": "The newest plan's decision",
                "responses": {"200": {"description": "The decision", "headers": {"tessera-plan-version": {"schema": {"type": "integer"}}},
                                      "content": json_content(r("Decision"))}, "404": error_response("No plan yet")}}},
            "/scheduler/filter": {"post": {"summary": "kube-scheduler extender filter: a pending member passes only its planned node",
                "requestBody": body(extender_args.clone(), false), "responses": {"200": ok(r("ExtenderFilterResult")), "400": error_response("Malformed ExtenderArgs")}}},
            "/scheduler/prioritize": {"post": {"summary": "kube-scheduler extender prioritize: the planned node scores 10",
                "requestBody": body(extender_args, false), "responses": {"200": ok(json!({"type": "array", "items": r("HostPriority")})), "400": error_response("Malformed ExtenderArgs")}}},
            "/scheduler/preempt": {"post": {"summary": "kube-scheduler extender preempt: keeps the planned node with the plan's victims",
                "requestBody": body(r("ExtenderPreemptionArgs"), false), "responses": {"200": ok(r("ExtenderPreemptionResult")), "400": error_response("Malformed ExtenderPreemptionArgs")}}},
            "/healthz": {"get": {"summary": "Liveness (no authentication)", "responses": {"200": ok(json!({"type": "object"}))}}},
            "/readyz": {"get": {"summary": "Readiness (no authentication); 503 while shutting down", "responses": {"200": ok(json!({"type": "object"})), "503": error_response("Shutting down")}}},
            "/metrics": {"get": {"summary": "Prometheus metrics (text exposition format 0.0.4)",
                "responses": {"200": {"description": "Metrics", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
            "/openapi.json": {"get": {"summary": "This document", "responses": {"200": ok(json!({"type": "object"}))}}},
        },
        "components": {"schemas": {
            "Error": {"type": "object", "required": ["error", "path"], "properties": {
                "error": {"type": "string", "description": "What is wrong, starting with the path when there is one"},
                "path": {"type": "string", "description": "Path of the offending field (`nodes[3].allocatable.memory`), or empty"}}},
            "Instance": {"type": "object", "additionalProperties": false, "description": "One scheduling-cycle snapshot (instance-format.md); unknown keys are errors",
                "properties": {
                    "topology": {"type": "object", "properties": {"levels": {"type": "array", "items": {"type": "string"}}}},
                    "sharedDevices": {"type": "array", "items": {"type": "string"}},
                    "priorityClasses": {"type": "array", "items": {"type": "object", "required": ["name", "value"]}},
                    "nodes": {"type": "array", "items": {"type": "object", "required": ["name"]}},
                    "podGroups": {"type": "array", "items": {"type": "object", "required": ["name", "tasks"]}},
                    "pods": {"type": "array", "items": {"type": "object", "required": ["name", "node"]}},
                    "queues": {"type": "array", "items": {"type": "object"}},
                    "options": {"type": "object"}}},
            "Decision": {"type": "object", "required": ["status", "objective", "gap", "placements", "unplaced", "evictions"],
                "description": "The answer for one cycle (instance-format.md, Decision)",
                "properties": {
                    "status": {"type": "string", "enum": ["Optimal", "Feasible", "Invalid"]},
                    "objective": {"type": "object"}, "gap": {"type": "number"}, "bounds": {"type": "object"},
                    "placements": {"type": "array", "items": {"type": "object", "required": ["podGroup", "pods"]}},
                    "unplaced": {"type": "array", "items": {"type": "object", "required": ["podGroup", "reason"]}},
                    "evictions": {"type": "array", "items": {"type": "object", "required": ["pod", "preemptor"]}},
                    "stats": {"type": "object"}}},
            "CheckReport": {"type": "object", "required": ["valid", "violations", "objective"], "properties": {
                "valid": {"type": "boolean"},
                "violations": {"type": "array", "items": {"type": "object", "properties": {"rule": {"type": "integer"}, "message": {"type": "string"}}}},
                "objective": {"type": "object", "description": "Terms 1-3 recomputed from the decision"}}},
            "CompareReport": {"type": "object", "required": ["rows", "summary"], "properties": {
                "timeLimitMillis": {"type": ["integer", "null"]},
                "rows": {"type": "array", "items": {"type": "object", "description": "One solver on one instance (checked)"}},
                "summary": {"type": "array", "items": {"type": "object", "description": "Per solver"}}}},
            "ClusterSummary": {"type": "object", "properties": {
                "version": {"type": "integer"}, "nodes": {"type": "integer"}, "boundPods": {"type": "integer"},
                "pendingGroups": {"type": "integer"}, "warnings": {"type": "array", "items": {"type": "string"}},
                "plan": {"type": ["object", "null"]}}},
            "ExtenderArgs": {"type": "object", "required": ["Pod"], "properties": {
                "Pod": {"type": "object", "description": "v1.Pod"},
                "Nodes": {"type": ["object", "null"], "description": "v1.NodeList (without nodeCacheCapable)"},
                "NodeNames": {"type": ["array", "null"], "items": {"type": "string"}, "description": "With nodeCacheCapable"}}},
            "ExtenderFilterResult": {"type": "object", "properties": {
                "Nodes": {"type": ["object", "null"]}, "NodeNames": {"type": ["array", "null"], "items": {"type": "string"}},
                "FailedNodes": {"type": "object", "additionalProperties": {"type": "string"}},
                "FailedAndUnresolvableNodes": {"type": "object", "additionalProperties": {"type": "string"}},
                "Error": {"type": "string"}}},
            "HostPriority": {"type": "object", "required": ["Host", "Score"], "properties": {"Host": {"type": "string"}, "Score": {"type": "integer", "minimum": 0, "maximum": 10}}},
            "MetaVictims": {"type": "object", "properties": {
                "Pods": {"type": "array", "items": {"type": "object", "properties": {"UID": {"type": "string"}}}},
                "NumPDBViolations": {"type": "integer"}}},
            "ExtenderPreemptionArgs": {"type": "object", "required": ["Pod"], "properties": {
                "Pod": {"type": "object"},
                "NodeNameToVictims": {"type": ["object", "null"], "additionalProperties": {"type": "object"}},
                "NodeNameToMetaVictims": {"type": ["object", "null"], "additionalProperties": r("MetaVictims")}}},
            "ExtenderPreemptionResult": {"type": "object", "properties": {
                "NodeNameToMetaVictims": {"type": "object", "additionalProperties": r("MetaVictims")}}},
        }},
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_reference_resolves() {
        let doc = super::document();
        let text = doc.to_string();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for part in text.split("#/components/schemas/").skip(1) {
            let name: String = part.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
            assert!(schemas.contains_key(&name), "unresolved $ref {name}");
        }
    }
}
