//! Kubernetes in and out: `kubectl get … -o json|yaml` output → instance
//! ([`import_texts`]), and a decision → the `policy/v1` Evictions and `v1` Bindings that
//! carry it out ([`export()`]). Plain library code: serde structs, no Kubernetes client.
//!
//! The keys read are those of `shared/spec/kubernetes-objects.md`, taken from each
//! project's source: kubernetes/api `core/v1/types.go` and `scheduling/{v1alpha1,v1alpha2,
//! v1alpha3,v1beta1}/types.go` (tags v0.35.7, v0.36.3, master of 2026-07-24),
//! kubernetes/component-helpers `resource/helpers.go` (effective requests),
//! kubernetes-sigs/scheduler-plugins `apis/scheduling/v1alpha1/types.go` (903da7df),
//! volcano-sh/apis `pkg/apis/scheduling/v1beta1/types.go` (536f121),
//! apache/yunikorn-k8shim `pkg/common/constants/constants.go` and `pkg/common/utils/utils.go`
//! (23b6b47f), kubernetes-sigs/kueue `apis/kueue/v1beta2/topology_types.go` and
//! `pkg/controller/jobframework/tas.go` (ff69552e79).
//!
//! What maps to what, and what becomes unplaceable, is documented for users in
//! `docs/kube-import.md`. In short:
//! - Nodes: allocatable (capacity if absent), labels, taints, `unschedulable`.
//! - Pods: finished ones are skipped; bound ones (`spec.nodeName`) become `pods` with their
//!   effective requests ([`requests`]), priority, `releasing` while being deleted,
//!   `placeholder` for YuniKorn placeholders, `preemptible: false` for mirror pods;
//!   pending ones become members of pod groups, one task per role and scheduling shape.
//! - Groups: Kubernetes' own PodGroup (1.36+) and Workload (1.35), CompositePodGroup
//!   (1.37, when all children are required), scheduler-plugins coscheduling, Volcano
//!   (with `minTaskMember`), YuniKorn task groups, Kueue plain-pod groups and Kueue
//!   topology-aware pods of one owner; a pod with none is a single-pod `basic` group.
//! - A hard constraint that cannot be expressed (inter-pod affinity, DoNotSchedule spread,
//!   DRA claims, host ports, a missing group object, HyperNode topology, …) makes the pod
//!   unplaceable (`nodeAffinity: [[]]`, which matches no node) with a warning naming the
//!   object: never a placement the cluster would reject, never a silent drop.

pub mod export;
pub mod import;
pub mod objects;
pub mod read;
pub mod requests;

pub use export::export;
pub use import::{import, import_texts, Imported, PodRef};
