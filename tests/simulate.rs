//! `tessera simulate`: the bundled scenarios' event logs against the sequences of
//! `shared/spec/yunikorn-gang-lifecycle.md` (section named in each test), worked out by
//! hand from the scenario and the reference: a 10 s cycle, release confirmations at the
//! next cycle, placeholders placed by YuniKorn's allocator (node sort fair: least used
//! node first, ties in node order). Every cycle decision is validated with `check`.

use serde_json::Value;
use tessera::sim::{simulate, Outcome, PlaceholderMode, Scenario, SimOptions};
use tessera::SolverKind;

fn scenario(name: &str) -> Scenario {
    let path = format!("{}/instances/scenarios/{name}.yaml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Scenario::from_text(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn run_with(name: &str, solver: SolverKind, placeholders: PlaceholderMode) -> Outcome {
    let opts = SimOptions { solver, placeholders, check: true, ..SimOptions::default() };
    let out = simulate(&scenario(name), &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(out.summary.totals.check_failures, 0, "{name}: a cycle decision failed check");
    assert_eq!(out.summary.totals.decisions_checked, out.summary.totals.decisions, "{name}: every decision is checked");
    out
}

fn run(name: &str) -> Outcome {
    run_with(name, SolverKind::Exact, PlaceholderMode::YuniKorn)
}

fn s(v: &Value, k: &str) -> String {
    match v.get(k) {
        Some(Value::String(x)) => x.clone(),
        Some(x) => x.to_string(),
        None => String::new(),
    }
}

/// One line per event, the fields that matter to the lifecycle: `at app kind details`.
/// `ask` and `submitted` lines are left out (they follow from the scenario).
fn lines(out: &Outcome) -> Vec<String> {
    out.log
        .iter()
        .filter(|e| !matches!(e["kind"].as_str(), Some("ask" | "submitted")))
        .map(|e| {
            let kind = s(e, "kind");
            let detail = match kind.as_str() {
                "state" => format!("{}>{} {}", s(e, "from"), s(e, "to"), s(e, "event")),
                "shimState" => format!("{}>{}", s(e, "from"), s(e, "to")),
                "allocation" => format!("{}@{}", s(e, "pod"), s(e, "node")),
                "release" => format!("{} {}", s(e, "pod"), s(e, "terminationType")),
                "released" => {
                    let c = &e["counters"];
                    let counters = if c.is_null() { String::new() } else { format!(" {}/{}/{}", c["count"], c["replaced"], c["timedOut"]) };
                    format!("{} {}{counters}", s(e, "pod"), s(e, "terminationType"))
                }
                "askTimedOut" | "podFailed" | "recovered" | "podCreated" => {
                    format!("{} {}", s(e, "pod"), s(e, "reason")).trim_end().to_string()
                }
                "placeholderTimer" => format!("{} {}", s(e, "action"), s(e, "fires")).trim_end().to_string(),
                _ => String::new(),
            };
            format!("{} {} {kind} {detail}", s(e, "at"), s(e, "app")).replace("  ", " ").trim_end().to_string()
        })
        .collect()
}

/// Compares line by line; `*` in an expected line matches any node.
fn assert_log(out: &Outcome, want: &[&str]) {
    let got = lines(out);
    let matches = |g: &str, w: &str| match w.split_once('*') {
        Some((pre, post)) => g.starts_with(pre) && g.ends_with(post) && g.len() > pre.len() + post.len() - 1,
        None => g == w,
    };
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(matches(g, w), "event {i}: got {g:?}, want {w:?}\nfull log:\n{}", got.join("\n"));
    }
    assert_eq!(got.len(), want.len(), "number of events; full log:\n{}", got.join("\n"));
}

/// The opening every gang of this file shares: shim Accepted then Reserving, the first
/// placeholder ask makes the core application Accepted.
const OPEN: [&str; 3] = ["0 {} shimState New>Accepted", "0 {} shimState Accepted>Reserving", "0 {} state New>Accepted runApplication"];

fn open(app: &str) -> Vec<String> {
    OPEN.iter().map(|l| l.replace("{}", app)).collect()
}

fn with(app: &str, rest: &[&str]) -> Vec<String> {
    let mut v = open(app);
    v.extend(rest.iter().map(|s| s.to_string()));
    v
}

fn check(out: &Outcome, want: &[String]) {
    let w: Vec<&str> = want.iter().map(|s| s.as_str()).collect();
    assert_log(out, &w);
}

/// Section 10, happy path: both placeholders allocated at the first cycle (n1 then the
/// less used n2), Running; the real pods swap at 10 s, are bound at the confirmation
/// (20 s, the timer cleared with the last one), run 60 s; Completing at 80 s, Completed
/// 30 s later, Expired three days after that.
#[test]
fn happy_path_section_10() {
    let out = run("happy-path");
    check(
        &out,
        &with(
            "job-a",
            &[
                "0 job-a allocation tg-job-a-workers-0@n1",
                "0 job-a placeholderTimer started 900",
                "0 job-a allocation tg-job-a-workers-1@n2",
                "0 job-a state Accepted>Running runApplication",
                "0 job-a shimState Reserving>Running",
                "10 job-a release tg-job-a-workers-0 PLACEHOLDER_REPLACED",
                "10 job-a release tg-job-a-workers-1 PLACEHOLDER_REPLACED",
                "20 job-a released tg-job-a-workers-0 PLACEHOLDER_REPLACED 2/1/0",
                "20 job-a allocation a-0@n1",
                "20 job-a released tg-job-a-workers-1 PLACEHOLDER_REPLACED 2/2/0",
                "20 job-a placeholderTimer cleared",
                "20 job-a allocation a-1@n2",
                "80 job-a released a-0 STOPPED_BY_RM",
                "80 job-a released a-1 STOPPED_BY_RM",
                "80 job-a state Running>Completing completeApplication",
                "110 job-a state Completing>Completed completeApplication",
                "259310 job-a state Completed>Expired expireApplication",
            ],
        ),
    );
    let a = &out.summary.apps[0];
    assert_eq!((a.wait, a.finish, a.end), (Some(20.0), Some(80.0), Some(110.0)));
    // Placeholders held 2 x 2 cpu for 20 s of the 80 s horizon on 8 cpu: 80 / 640.
    assert_eq!(out.summary.totals.reserved_idle["cpu"], 0.125);
}

/// Section 10, Soft timeout with 1 of 2 allocated: at 60 s Accepted -> Resuming
/// (ResourceReservationTimeout), the allocated placeholder released TIMEOUT, the pending
/// one timed out (TimedOut 1); its confirmation at 70 s makes it Accepted, the shim sends
/// the real pods, which run as a normal application one after the other on the single
/// 2-cpu node.
#[test]
fn soft_timeout_section_10() {
    let out = run("soft-timeout");
    check(
        &out,
        &with(
            "job-s",
            &[
                "0 job-s allocation tg-job-s-workers-0@n1",
                "0 job-s placeholderTimer started 60",
                "60 job-s placeholderTimer fired",
                "60 job-s state Accepted>Resuming resumeApplication",
                "60 job-s shimState Reserving>Resuming",
                "60 job-s release tg-job-s-workers-0 TIMEOUT",
                "60 job-s askTimedOut tg-job-s-workers-1",
                "70 job-s released tg-job-s-workers-0 TIMEOUT 2/0/2",
                "70 job-s state Resuming>Accepted runApplication",
                "70 job-s shimState Resuming>Running",
                "70 job-s allocation s-0@n1",
                "70 job-s state Accepted>Running runApplication",
                "100 job-s released s-0 STOPPED_BY_RM",
                "100 job-s allocation s-1@n1",
                "130 job-s released s-1 STOPPED_BY_RM",
                "130 job-s state Running>Completing completeApplication",
                "160 job-s state Completing>Completed completeApplication",
                "259360 job-s state Completed>Expired expireApplication",
            ],
        ),
    );
    let state_msg: Vec<String> =
        out.log.iter().filter(|e| e["kind"] == "state" && e.get("message").is_some()).map(|e| s(e, "message")).collect();
    assert_eq!(state_msg, ["ResourceReservationTimeout"]);
    assert_eq!(out.summary.apps[0].wait, Some(70.0));
    assert_eq!(out.summary.totals.placeholder_timeouts, 1);
}

/// Section 10, Hard timeout: the same start, then Accepted -> Failing, the held real pods
/// fail (ResourceReservationTimeout), and the confirmation makes it Failed; no real pod
/// is ever allocated.
#[test]
fn hard_timeout_section_10() {
    let out = run("hard-timeout");
    check(
        &out,
        &with(
            "job-h",
            &[
                "0 job-h allocation tg-job-h-workers-0@n1",
                "0 job-h placeholderTimer started 60",
                "60 job-h placeholderTimer fired",
                "60 job-h state Accepted>Failing failApplication",
                "60 job-h shimState Reserving>Failed",
                "60 job-h podFailed h-0 ResourceReservationTimeout",
                "60 job-h podFailed h-1 ResourceReservationTimeout",
                "60 job-h release tg-job-h-workers-0 TIMEOUT",
                "60 job-h askTimedOut tg-job-h-workers-1",
                "70 job-h released tg-job-h-workers-0 TIMEOUT 2/0/2",
                "70 job-h state Failing>Failed failApplication",
                "259270 job-h state Failed>Expired expireApplication",
            ],
        ),
    );
    let a = &out.summary.apps[0];
    assert_eq!((a.start, a.outcome.as_deref()), (None, Some("Failed")));
}

/// Sections 3 and 10: the 2-cpu real pod is larger than the 1-cpu placeholders, so
/// both placeholders of its group are released TIMEOUT at the first replacement step
/// (10 s); after the confirmations (TimedOut 2, canReplace false) both real pods are
/// allocated normally at 20 s; the application never leaves Running.
#[test]
fn real_pod_larger_than_placeholder_section_3() {
    let out = run("real-larger");
    check(
        &out,
        &with(
            "job-l",
            &[
                "0 job-l allocation tg-job-l-workers-0@n1",
                "0 job-l placeholderTimer started 900",
                "0 job-l allocation tg-job-l-workers-1@n2",
                "0 job-l state Accepted>Running runApplication",
                "0 job-l shimState Reserving>Running",
                "10 job-l release tg-job-l-workers-0 TIMEOUT",
                "10 job-l release tg-job-l-workers-1 TIMEOUT",
                "20 job-l released tg-job-l-workers-0 TIMEOUT 2/0/1",
                "20 job-l released tg-job-l-workers-1 TIMEOUT 2/0/2",
                "20 job-l placeholderTimer cleared",
                "20 job-l allocation l-0@*",
                "20 job-l allocation l-1@*",
                "80 job-l released l-0 STOPPED_BY_RM",
                "80 job-l released l-1 STOPPED_BY_RM",
                "80 job-l state Running>Completing completeApplication",
                "110 job-l state Completing>Completed completeApplication",
                "259310 job-l state Completed>Expired expireApplication",
            ],
        ),
    );
    let msgs: Vec<String> = out.log.iter().filter(|e| e["kind"] == "release").map(|e| s(e, "message")).collect();
    assert_eq!(msgs, ["cancel placeholder: resource incompatible"; 2]);
}

/// Sections 2 and 10, case 1: the Hard gang is Running with one placeholder replaced
/// and one left when the timer fires at 60 s: only that one is released TIMEOUT, no
/// state change; the application completes normally.
#[test]
fn timeout_while_running_section_2_case_1() {
    let out = run("timeout-while-running");
    check(
        &out,
        &with(
            "job-t",
            &[
                "0 job-t allocation tg-job-t-workers-0@n1",
                "0 job-t placeholderTimer started 60",
                "0 job-t allocation tg-job-t-workers-1@n2",
                "0 job-t state Accepted>Running runApplication",
                "0 job-t shimState Reserving>Running",
                "10 job-t release tg-job-t-workers-0 PLACEHOLDER_REPLACED",
                "20 job-t released tg-job-t-workers-0 PLACEHOLDER_REPLACED 2/1/0",
                "20 job-t allocation t-0@n1",
                "60 job-t placeholderTimer fired",
                "60 job-t release tg-job-t-workers-1 TIMEOUT",
                "70 job-t released tg-job-t-workers-1 TIMEOUT 2/1/1",
                "320 job-t released t-0 STOPPED_BY_RM",
                "320 job-t state Running>Completing completeApplication",
                "350 job-t state Completing>Completed completeApplication",
                "259550 job-t state Completed>Expired expireApplication",
            ],
        ),
    );
}

/// Section 4: the only real pod finishes at 40 s with a placeholder still allocated:
/// Running -> Completing at once; the Completing timer (30 s) releases the leftover
/// TIMEOUT at 70 s, its confirmation (80 s) clears the placeholder timer and completes.
#[test]
fn leftover_placeholder_completing_timer_section_4() {
    let out = run("leftover-completing");
    check(
        &out,
        &with(
            "job-c",
            &[
                "0 job-c allocation tg-job-c-workers-0@n1",
                "0 job-c placeholderTimer started 900",
                "0 job-c allocation tg-job-c-workers-1@n2",
                "0 job-c state Accepted>Running runApplication",
                "0 job-c shimState Reserving>Running",
                "10 job-c release tg-job-c-workers-0 PLACEHOLDER_REPLACED",
                "20 job-c released tg-job-c-workers-0 PLACEHOLDER_REPLACED 2/1/0",
                "20 job-c allocation c-0@n1",
                "40 job-c released c-0 STOPPED_BY_RM",
                "40 job-c state Running>Completing completeApplication",
                "70 job-c release tg-job-c-workers-1 TIMEOUT",
                "80 job-c released tg-job-c-workers-1 TIMEOUT 2/1/1",
                "80 job-c placeholderTimer cleared",
                "80 job-c state Completing>Completed completeApplication",
                "259280 job-c state Completed>Expired expireApplication",
            ],
        ),
    );
    let msg = out.log.iter().find(|e| e["kind"] == "release" && e["terminationType"] == "TIMEOUT").map(|e| s(e, "message"));
    assert_eq!(msg.as_deref(), Some("releasing placeholders on app complete"));
}

/// Section 3, first-fit fallback: the real pod is pinned to zone b, its placeholder sits
/// in zone a; the swap takes n2 at 10 s (the real pod holds n2 while the placeholder
/// still holds n1), and the confirmation at 20 s binds it on n2.
#[test]
fn replacement_on_another_node_section_3() {
    let out = run("replace-other-node");
    check(
        &out,
        &with(
            "job-o",
            &[
                "0 job-o allocation tg-job-o-workers-0@n1",
                "0 job-o placeholderTimer started 900",
                "0 job-o state Accepted>Running runApplication",
                "0 job-o shimState Reserving>Running",
                "10 job-o release tg-job-o-workers-0 PLACEHOLDER_REPLACED",
                "20 job-o released tg-job-o-workers-0 PLACEHOLDER_REPLACED 1/1/0",
                "20 job-o placeholderTimer cleared",
                "20 job-o allocation o-0@n2",
                "80 job-o released o-0 STOPPED_BY_RM",
                "80 job-o state Running>Completing completeApplication",
                "110 job-o state Completing>Completed completeApplication",
                "259310 job-o state Completed>Expired expireApplication",
            ],
        ),
    );
    // Between 10 s and 20 s both nodes hold 2 cpu of the job: 4 of 8 cpu in use.
    let c10 = out.summary.cycles.iter().find(|c| c.at == 10.0).expect("a cycle at 10 s");
    assert_eq!((c10.utilisation["cpu"], c10.reserved["cpu"]), (0.25, 0.25));
}

/// Section 5: gangs in a FAIR leaf and gangs whose placeholderAsk exceeds the queue max
/// are Rejected (their pods fail ApplicationRejected); a plain application in the FAIR
/// leaf runs.
#[test]
fn rejections_section_5() {
    let out = run("rejections");
    check(
        &out,
        &[
            "0 gang-fair state New>Rejected rejectApplication",
            "0 gang-fair shimState New>Rejected",
            "0 gang-fair podFailed f-0 ApplicationRejected",
            "0 gang-big state New>Rejected rejectApplication",
            "0 gang-big shimState New>Rejected",
            "0 gang-big podFailed b-0 ApplicationRejected",
            "0 plain-fair shimState New>Accepted",
            "0 plain-fair shimState Accepted>Running",
            "0 plain-fair state New>Accepted runApplication",
            "0 plain-fair allocation p-0@n1",
            "0 plain-fair state Accepted>Running runApplication",
            "30 plain-fair released p-0 STOPPED_BY_RM",
            "30 plain-fair state Running>Completing completeApplication",
            "60 plain-fair state Completing>Completed completeApplication",
            "259200 gang-fair state Rejected>Expired expireApplication",
            "259200 gang-big state Rejected>Expired expireApplication",
            "259260 plain-fair state Completed>Expired expireApplication",
        ]
        .map(String::from),
    );
    let msgs: Vec<String> = out.log.iter().filter(|e| e["kind"] == "state" && e["to"] == "Rejected").map(|e| s(e, "message")).collect();
    assert_eq!(
        msgs,
        [
            "queue root.fair cannot run application gang-fair with task group request: unsupported sort type",
            "task group request of application gang-big (cpu 4) is larger than max queue allocation of root.small (cpu 2)"
        ]
    );
}

/// Section 4: a pod created while Completing is a new ask (Completing -> Running); after
/// Completed the same id is a fresh application (attempt 2, new counters).
#[test]
fn completing_revived_and_id_reuse_section_4() {
    let out = run("id-reuse");
    let got = lines(&out);
    let want = [
        "50 job-u state Running>Completing completeApplication",
        "60 job-u podCreated u-1",
        "60 job-u state Completing>Running runApplication",
        "60 job-u allocation u-1@n1",
        "70 job-u released u-1 STOPPED_BY_RM",
        "70 job-u state Running>Completing completeApplication",
        "100 job-u state Completing>Completed completeApplication",
        "110 job-u shimState New>Accepted",
    ];
    let from = got.iter().position(|l| l == want[0]).unwrap_or_else(|| panic!("no {:?} in\n{}", want[0], got.join("\n")));
    assert_eq!(&got[from..from + want.len()], &want);
    let second: Vec<&Value> = out.log.iter().filter(|e| e["attempt"] == 2).collect();
    assert_eq!(second.first().map(|e| s(e, "kind")).as_deref(), Some("submitted"));
    assert_eq!(second.first().map(|e| s(e, "at")).as_deref(), Some("110"));
    let apps: Vec<(u32, Option<f64>, String)> = out.summary.apps.iter().map(|a| (a.attempt, a.end, a.state.clone())).collect();
    assert_eq!(apps, [(1, Some(100.0), "Expired".to_string()), (2, Some(190.0), "Expired".to_string())]);
    assert_eq!(out.summary.apps[1].placeholders[0].count, 1);
}

/// Section 6: restart at 5 s with both placeholders allocated and the real asks pending.
/// The new core rebuilds the application from its pods in creation order: the first
/// recovered placeholder makes it Accepted and starts the timer with the time left since
/// creation (120 - 5 = 115 s, so it still fires at 120), the second completes the
/// placeholderAsk (Running); the shim finds every member bound and sends the real pods,
/// and replacement goes on as on the happy path.
#[test]
fn restart_recovers_placeholders_section_6() {
    let out = run("restart-recovery");
    let got = lines(&out);
    let from = got.iter().position(|l| l == "5 restart").unwrap_or_else(|| panic!("no restart in\n{}", got.join("\n")));
    let want = [
        "5 restart",
        "5 job-r recovering",
        "5 job-r shimState New>Accepted",
        "5 job-r recovered tg-job-r-workers-0",
        "5 job-r state New>Accepted runApplication",
        "5 job-r placeholderTimer started 120",
        "5 job-r recovered tg-job-r-workers-1",
        "5 job-r state Accepted>Running runApplication",
        "5 job-r shimState Accepted>Reserving",
        "5 job-r shimState Reserving>Running",
        "10 job-r release tg-job-r-workers-0 PLACEHOLDER_REPLACED",
        "10 job-r release tg-job-r-workers-1 PLACEHOLDER_REPLACED",
        "20 job-r released tg-job-r-workers-0 PLACEHOLDER_REPLACED 2/1/0",
        "20 job-r allocation r-0@n1",
        "20 job-r released tg-job-r-workers-1 PLACEHOLDER_REPLACED 2/2/0",
        "20 job-r placeholderTimer cleared",
        "20 job-r allocation r-1@n2",
    ];
    assert_eq!(&got[from..from + want.len()], &want);
    let rec = out.log.iter().find(|e| e["kind"] == "recovering").expect("recovering");
    assert_eq!((s(rec, "creationTime"), s(rec, "placeholderTimeout")), ("0".to_string(), "115".to_string()));
    // No placeholder was created again: the shim found minMember bound.
    assert_eq!(out.summary.apps[0].placeholders_created, 2);
}

/// The two placeholder modes on a queue of max 4 cpu with two gangs of 3 x 1 cpu.
/// yunikorn: at 10 s B gets one placeholder in the 1 cpu of headroom A's three leave (A's
/// are being replaced but still counted), holds it idle until its timer fires at 70 s,
/// then runs as a normal application: b-0 at 80 s, b-1 and b-2 when A ends at 120 s.
/// atomic: B's three placeholders only when all fit, at 120 s; no timeout, nothing idle
/// from B, but B starts at 140 s.
#[test]
fn placeholder_modes_on_a_contended_queue() {
    let yk = run_with("contended-modes", SolverKind::Exact, PlaceholderMode::YuniKorn);
    let at = |o: &Outcome, pod: &str| {
        o.log.iter().find(|e| e["kind"] == "allocation" && e["pod"] == pod).map(|e| e["at"].as_f64().unwrap_or(-1.0))
    };
    assert_eq!(at(&yk, "tg-gang-b-w-0"), Some(10.0));
    assert_eq!(at(&yk, "tg-gang-b-w-1"), None);
    assert_eq!([at(&yk, "b-0"), at(&yk, "b-1"), at(&yk, "b-2")], [Some(80.0), Some(120.0), Some(120.0)]);
    let b = &yk.summary.apps[1];
    assert_eq!((b.wait, b.placeholder_timeouts, b.placeholders_timed_out), (Some(79.0), 1, 3));
    assert_eq!(yk.summary.apps[0].wait, Some(20.0));

    let at_ = run_with("contended-modes", SolverKind::Exact, PlaceholderMode::Atomic);
    assert_eq!([at(&at_, "tg-gang-b-w-0"), at(&at_, "tg-gang-b-w-2")], [Some(120.0), Some(120.0)]);
    let b = &at_.summary.apps[1];
    assert_eq!((b.wait, b.placeholder_timeouts, b.placeholders_timed_out), (Some(139.0), 0, 0));
    // Reserved idle cpu-seconds: yunikorn A 3 x 20 s + B 1 x 70 s (10..80) = 130;
    // atomic A 3 x 20 + B 3 x 20 = 120. Share of 8 cpu over the horizon (220 s, 240 s).
    assert_eq!(yk.summary.totals.reserved_idle["cpu"], 130.0 / (8.0 * 220.0));
    assert_eq!(at_.summary.totals.reserved_idle["cpu"], 120.0 / (8.0 * 240.0));
}

/// Same scenario, same solver: the same log; and every solver of the registry runs the
/// contended scenario in both modes with every decision valid.
#[test]
fn deterministic_and_valid_for_every_solver() {
    let a = run("contended-modes");
    let b = run("contended-modes");
    assert_eq!(a.log, b.log);
    for &k in SolverKind::ALL {
        for m in [PlaceholderMode::YuniKorn, PlaceholderMode::Atomic] {
            let o = run_with("contended-modes", k, m);
            assert_eq!(o.summary.totals.apps, 2, "{}", k.name());
        }
    }
}

/// Scenario errors name the path of the bad field; unknown keys are errors.
#[test]
fn scenario_errors_name_the_path() {
    let err = |t: &str| Scenario::from_text(t).map(|_| ()).unwrap_err().to_string();
    let nodes = "instance:\n  nodes: [{name: n1, allocatable: {cpu: 4}}]\n";
    assert!(err(&format!("{nodes}colour: red\n")).contains("unknown field `colour`"));
    assert_eq!(
        err(&format!("{nodes}events:\n  - {{at: 0, submit: {{app: a, gangSchedulingStyle: Hard, placeholderTimeoutInSeconds: 1, taskGroups: [{{name: g, minMember: 1}}]}}}}\n"))
            .split(':')
            .next(),
        Some("events[0].submit.taskGroups[0]")
    );
    assert_eq!(err(&format!("{nodes}cyclePeriod: 0\n")), "cyclePeriod: must be between 1ms and a day");
    assert_eq!(
        err(&format!("{nodes}events:\n  - {{at: 0, completePod: ghost}}\n")),
        "events[0].completePod: no pod \"ghost\" of an application is created before"
    );
}

/// Node removal (yunikorn-core `partition.go removeNodeAllocations`, reached from
/// `context.go updateNode` on DECOMMISSION; section 8's UNKNOWN_TERMINATION_TYPE). Both
/// placeholders at 0 s (n1, then n2 before n3 in node order); n-0 replaces the first at
/// 10 s, bound at 20 s. At 30 s n2 leaves with the unreplaced placeholder: removed
/// UNKNOWN, which counts as TimedOut (2/1/1), the placeholder timer cleared as no
/// placeholder is left, no state change (n-0 runs). n-1 created at 40 s: Count 2 =
/// Replaced 1 + TimedOut 1, so canReplace is false and it is allocated normally on the
/// only free node, n3. At 50 s n1 leaves with n-0: removed UNKNOWN, created again, but no
/// node has room until n4 joins at 60 s; n-0 then runs to 120 s, n-1 to 100 s;
/// Completing at 120 s, Completed 30 s later, Expired three days after.
#[test]
fn node_removal_section_8() {
    let out = run("node-removal");
    check(
        &out,
        &with(
            "job-n",
            &[
                "0 job-n allocation tg-job-n-workers-0@n1",
                "0 job-n placeholderTimer started 900",
                "0 job-n allocation tg-job-n-workers-1@n2",
                "0 job-n state Accepted>Running runApplication",
                "0 job-n shimState Reserving>Running",
                "10 job-n release tg-job-n-workers-0 PLACEHOLDER_REPLACED",
                "20 job-n released tg-job-n-workers-0 PLACEHOLDER_REPLACED 2/1/0",
                "20 job-n allocation n-0@n1",
                "30 nodeRemoved",
                "30 job-n released tg-job-n-workers-1 UNKNOWN_TERMINATION_TYPE 2/1/1",
                "30 job-n placeholderTimer cleared",
                "30 job-n release tg-job-n-workers-1 STOPPED_BY_RM",
                "40 job-n podCreated n-1",
                "40 job-n allocation n-1@n3",
                "50 nodeRemoved",
                "50 job-n released n-0 UNKNOWN_TERMINATION_TYPE",
                "50 job-n release n-0 STOPPED_BY_RM",
                "50 job-n podCreated n-0",
                "60 nodeAdded",
                "60 job-n allocation n-0@n4",
                "100 job-n released n-1 STOPPED_BY_RM",
                "120 job-n released n-0 STOPPED_BY_RM",
                "120 job-n state Running>Completing completeApplication",
                "150 job-n state Completing>Completed completeApplication",
                "259350 job-n state Completed>Expired expireApplication",
            ],
        ),
    );
    let a = &out.summary.apps[0];
    assert_eq!((a.placeholders[0].count, a.placeholders[0].replaced, a.placeholders[0].timed_out), (2, 1, 1));
    assert_eq!(a.placeholders_created, 2);
}

/// Progress is reported once per cycle, in simulated-time order, and ends at the last
/// cycle the summary counts.
#[test]
fn progress_is_reported_after_every_cycle() {
    let sc = scenario("soft-timeout");
    let mut seen = Vec::new();
    let out = tessera::sim::simulate_with_progress(&sc, &SimOptions::default(), &mut |p| seen.push(p)).expect("soft-timeout runs");
    assert_eq!(seen.len(), out.summary.totals.cycles_run, "one report per cycle");
    assert!(seen.windows(2).all(|w| w[0].at < w[1].at && w[0].cycles + 1 == w[1].cycles), "{seen:?}");
    assert_eq!(seen.first().map(|p| p.cycles), Some(1));
    let end = sc.until.or(sc.events.last().map(|e| e.0)).expect("the scenario has events");
    assert!(seen.iter().all(|p| p.end == end), "{seen:?}");
    // The same run without a callback decides the same.
    assert_eq!(simulate(&sc, &SimOptions::default()).expect("runs").log, out.log);
}
