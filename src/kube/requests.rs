//! A pod's effective requests, computed as kube-scheduler's NodeResourcesFit does
//! (`kubernetes/component-helpers` `resource/helpers.go` `PodRequests` and
//! `AggregateContainerRequests`, called from `pkg/scheduler/framework/plugins/noderesources/fit.go`
//! `computePodResourceRequest`), per resource name r:
//!
//! 1. `sum` = regular containers + sidecars (init containers with `restartPolicy: Always`);
//! 2. walking the init containers in order, a sidecar uses the sidecars seen so far
//!    (itself included), a regular init container its own request plus the sidecars
//!    declared before it; `init` = the largest of these;
//! 3. `max(sum, init)`;
//! 4. pod-level `resources.requests` (gate PodLevelResources, on by default since 1.34)
//!    replace that for `cpu`, `memory` and `hugepages-*` only;
//! 5. plus `overhead`.
//!
//! A missing request takes the container's limit (API defaulting). Bound pods are counted
//! with `UseStatusResources`: per regular container, the largest of the spec request and
//! what `status.containerStatuses` says was allocated (in-place resize).

use super::objects::{Container, Pod, ResourceList};
use super::read::join;
use crate::wire::quantity::{self, Scale};
use crate::wire::InputError;
use std::collections::BTreeMap;

/// Engine scale of a Kubernetes resource: millicores for cpu, base units otherwise
/// (`Quantity.MilliValue()` vs `Value()` in the scheduler).
pub fn scale_of(resource: &str) -> Scale {
    if resource == "cpu" {
        Scale::Milli
    } else {
        Scale::Base
    }
}

/// Reads a resource list into engine units; errors name `path.resource`.
pub fn read_list(list: &ResourceList, path: &str) -> Result<BTreeMap<String, i64>, InputError> {
    let mut out = BTreeMap::new();
    for (k, q) in list {
        let text = q.text();
        let v = quantity::parse(&text, scale_of(k)).map_err(|e| InputError::new(format!("{path}.{k}"), format!("{e} {text:?}")))?;
        out.insert(k.clone(), v);
    }
    Ok(out)
}

/// A container's requests with limits filling the missing names.
fn container_requests(c: &Container, path: &str) -> Result<BTreeMap<String, i64>, InputError> {
    let mut req = read_list(&c.resources.requests, &format!("{path}.resources.requests"))?;
    for (k, v) in read_list(&c.resources.limits, &format!("{path}.resources.limits"))? {
        req.entry(k).or_insert(v);
    }
    Ok(req)
}

fn add(into: &mut BTreeMap<String, i64>, from: &BTreeMap<String, i64>) {
    for (k, v) in from {
        let e = into.entry(k.clone()).or_insert(0);
        *e = e.saturating_add(*v);
    }
}

fn max_into(into: &mut BTreeMap<String, i64>, from: &BTreeMap<String, i64>) {
    for (k, v) in from {
        let e = into.entry(k.clone()).or_insert(0);
        *e = (*e).max(*v);
    }
}

/// The pod's effective requests in engine units (names with 0 dropped). `bound`: count
/// the allocated resources reported in the status as well. `path` is the pod's path
/// (e.g. `items[3]`), for errors.
pub fn pod_requests(pod: &Pod, bound: bool, path: &str) -> Result<BTreeMap<String, i64>, InputError> {
    let mut sum = BTreeMap::new();
    for (i, c) in pod.spec.containers.iter().enumerate() {
        let cp = join(path, &format!("spec.containers[{i}]"));
        let mut req = container_requests(c, &cp)?;
        if bound {
            if let Some((j, st)) = pod.status.container_statuses.iter().enumerate().find(|(_, s)| s.name == c.name) {
                let sp = join(path, &format!("status.containerStatuses[{j}]"));
                max_into(&mut req, &read_list(&st.allocated_resources, &format!("{sp}.allocatedResources"))?);
                if let Some(r) = &st.resources {
                    max_into(&mut req, &read_list(&r.requests, &format!("{sp}.resources.requests"))?);
                }
            }
        }
        add(&mut sum, &req);
    }
    let mut sidecars = BTreeMap::new();
    let mut init = BTreeMap::new();
    for (i, c) in pod.spec.init_containers.iter().enumerate() {
        let req = container_requests(c, &join(path, &format!("spec.initContainers[{i}]")))?;
        if c.restart_policy.as_deref() == Some("Always") {
            add(&mut sum, &req);
            add(&mut sidecars, &req);
            max_into(&mut init, &sidecars);
        } else {
            let mut uses = req;
            add(&mut uses, &sidecars);
            max_into(&mut init, &uses);
        }
    }
    let mut total = sum;
    max_into(&mut total, &init);
    if let Some(r) = &pod.spec.resources {
        let pod_level = read_list(&r.requests, &join(path, "spec.resources.requests"))?;
        for (k, v) in pod_level {
            if k == "cpu" || k == "memory" || k.starts_with("hugepages-") {
                total.insert(k, v);
            }
        }
    }
    add(&mut total, &read_list(&pod.spec.overhead, &join(path, "spec.overhead"))?);
    total.retain(|_, v| *v > 0);
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(json: &str) -> Pod {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_worked_example_of_the_spec() {
        // kubernetes-objects.md section 7: cpu = pod-level 4 + overhead 250m; memory =
        // max(8Gi, 1Gi) + 120Mi; gpu = 1.
        let p = pod(r#"{"spec":{"overhead":{"cpu":"250m","memory":"120Mi"},"resources":{"requests":{"cpu":"4"}},
            "initContainers":[{"name":"init","resources":{"requests":{"cpu":"2","memory":"1Gi"}}},
                              {"name":"sidecar","restartPolicy":"Always","resources":{"requests":{"cpu":"500m"}}}],
            "containers":[{"name":"main","resources":{"requests":{"cpu":"3","memory":"8Gi","nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]}}"#);
        let r = pod_requests(&p, false, "items[0]").unwrap();
        assert_eq!(r["cpu"], 4250);
        assert_eq!(r["memory"], 8 * (1 << 30) + 120 * (1 << 20));
        assert_eq!(r["nvidia.com/gpu"], 1);
    }

    #[test]
    fn init_containers_and_sidecars_without_pod_level_resources() {
        // Sidecar s1 (1 cpu) before init i1 (3 cpu): i1 uses 3 + 1 = 4; sidecar s2 (2 cpu)
        // after it: uses 1 + 2 = 3. Containers: 1 cpu + sidecars 3 = 4... with the main
        // container at 500m: sum = 0.5 + 1 + 2 = 3.5, init = 4 -> 4.
        let p = pod(r#"{"spec":{
            "initContainers":[{"name":"s1","restartPolicy":"Always","resources":{"requests":{"cpu":"1"}}},
                              {"name":"i1","resources":{"requests":{"cpu":"3"}}},
                              {"name":"s2","restartPolicy":"Always","resources":{"requests":{"cpu":"2"}}}],
            "containers":[{"name":"main","resources":{"requests":{"cpu":"500m"}}}]}}"#);
        assert_eq!(pod_requests(&p, false, "p").unwrap()["cpu"], 4000);
        // A larger main container makes the sum win: 3 + 1 + 2 = 6 > 4.
        let p = pod(r#"{"spec":{
            "initContainers":[{"name":"s1","restartPolicy":"Always","resources":{"requests":{"cpu":"1"}}},
                              {"name":"i1","resources":{"requests":{"cpu":"3"}}},
                              {"name":"s2","restartPolicy":"Always","resources":{"requests":{"cpu":"2"}}}],
            "containers":[{"name":"main","resources":{"requests":{"cpu":"3"}}}]}}"#);
        assert_eq!(pod_requests(&p, false, "p").unwrap()["cpu"], 6000);
    }

    #[test]
    fn limits_fill_missing_requests_and_status_counts_for_bound_pods() {
        let p = pod(r#"{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"},"limits":{"cpu":"2","memory":"1Gi"}}}]},
            "status":{"containerStatuses":[{"name":"c","allocatedResources":{"cpu":"1500m","memory":"512Mi"}}]}}"#);
        let pending = pod_requests(&p, false, "p").unwrap();
        assert_eq!((pending["cpu"], pending["memory"]), (1000, 1 << 30));
        let bound = pod_requests(&p, true, "p").unwrap();
        assert_eq!((bound["cpu"], bound["memory"]), (1500, 1 << 30));
    }

    #[test]
    fn bad_quantities_name_their_path() {
        let p = pod(r#"{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"12Q"}}}]}}"#);
        let e = pod_requests(&p, false, "items[2]").unwrap_err();
        assert_eq!(e.path, "items[2].spec.containers[0].resources.requests.memory");
        assert!(e.message.contains("12Q"), "{e}");
    }
}
