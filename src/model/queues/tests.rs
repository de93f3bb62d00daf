//! Tests of the queue configuration and of the effective priority order.

use super::*;

/// The queue tree of the priority document's "Multitenancy" example (seed
/// `003_72d2ec8592b2ad0e.txt`), as written there.
const PRIORITY_DOC_QUEUES: &str = r#"
partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: system
            queues:
              - name: system-normal
                properties:
                  priority.offset: "0"
              - name: system-high
                properties:
                  priority.offset: "1000"
              - name: system-low
                properties:
                  priority.offset: "-1000"
          - name: tenants
            properties:
              priority.policy: "fence"
            queues:
              - name: tenant-a
                properties:
                  priority.policy: "fence"
                  priority.offset: "10"
                queues:
                  - name: child-a-1
                  - name: child-a-2
              - name: tenant-b
                properties:
                  priority.policy: "fence"
                  priority.offset: "0"
                queues:
                  - name: child-b-1
                  - name: child-b-2
"#;

/// The requests of the document's figure (the figure itself is not in the text; these are
/// the tasks its table schedules, each in the queue the table names): queue, priority.
const PRIORITY_DOC_TASKS: &[(&str, i64)] = &[
    ("root.system.system-high", 1),
    ("root.system.system-normal", 10),
    ("root.system.system-normal", 2),
    ("root.system.system-low", 3),
    ("root.tenants.tenant-a.child-a-1", 8),
    ("root.tenants.tenant-a.child-a-1", 5),
    ("root.tenants.tenant-a.child-a-2", 6),
    ("root.tenants.tenant-a.child-a-2", 4),
    ("root.tenants.tenant-b.child-b-1", 9),
    ("root.tenants.tenant-b.child-b-1", 7),
    ("root.tenants.tenant-b.child-b-2", 8),
];

/// "Before scheduling, the queue priorities will be as follows:" (verbatim).
const PRIORITY_DOC_BEFORE: &[&str] = &[
    "* root",
    " * system: 1001",
    " * system-normal: 10",
    " * system-high: 1001",
    " * system-low: -997",
    " * tenants: 0 (fence)",
    " * tenant-a: 10 (fence)",
    " * child-a-1: 8",
    " * child-a-2: 6",
    " * tenant-b: 0 (fence)",
    " * child-b-1: 9",
    " * child-b-2: 8",
];

/// The document's table, rows verbatim.
const PRIORITY_DOC_TABLE: &[&str] = &[
    "| 1 | root.system.system-high | P1 | **system-high**: `1001` -> n/a <br/> **system**: `1001` -> `10` |",
    "| 2 | root.system.system-normal | P10 | **system-normal**: `10` -> `2` <br/> **system**: `10` -> `2` |",
    "| 3 | root.system.system-normal | P2 | **system-normal**: `2` -> n/a <br/> **system**: `2` -> `-997` |",
    "| 4 | root.tenants.tenant-a.child-a-1 | P8 | **child-a-1**: `8` -> `5` |",
    "| 5 | root.tenants.tenant-a.child-a-2 | P6 | **child-a-2**: `6` -> `4` |",
    "| 6 | root.tenants.tenant-a.child-a-1 | P5 | **child-a-1**: `5` -> n/a |",
    "| 7 | root.tenants.tenant-a.child-a-2 | P4 | **child-a-2**: `4` -> n/a <br/> **tenant-a**: `10` -> n/a |",
    "| 8 | root.tenants.tenant-b.child-b-1 | P9 | **child-b-1**: `9` -> `7` |",
    "| 9 | root.tenants.tenant-b.child-b-2 | P8 | **child-b-2**: `8` -> n/a |",
    "| 10 | root.tenants.tenant-b.child-b-1 | P7 | **child-b-1**: `7` -> n/a <br/> **tenant-b**: `0` -> n/a <br/> **tenants**: `0` -> n/a |",
    "| 11 | root.system.system-low | P3 | **system-low**: `-997` -> n/a <br/> **system**: `-997` -> n/a |",
];

fn doc_tree() -> QueueTree {
    parse_queues_yaml(PRIORITY_DOC_QUEUES).unwrap()
}

fn tree_of(yaml: &str) -> QueueTree {
    parse_queues_yaml(yaml).unwrap_or_else(|e| panic!("{e}"))
}

fn app(tree: &QueueTree, name: &str, queue: &str, priority: i64, created_at: i64) -> App {
    App { name: name.into(), queue: tree.get(queue).unwrap_or_else(|| panic!("no queue {queue}")), priority, created_at }
}

fn shown(v: Option<i64>) -> String {
    v.map_or("n/a".to_string(), |v| format!("`{v}`"))
}

/// The "Result" column: every queue on the path from the scheduled task's leaf up to (not
/// including) root whose priority changed, innermost first, as the document writes it.
fn changes(tree: &QueueTree, leaf: QueueId, before: &[Option<i64>], after: &[Option<i64>]) -> String {
    tree.ancestors(leaf)
        .filter(|&q| q != 0 && before[q] != after[q])
        .map(|q| format!("**{}**: {} -> {}", tree.queues[q].name, shown(before[q]), shown(after[q])))
        .collect::<Vec<_>>()
        .join(" <br/> ")
}

fn before_list(tree: &QueueTree, prios: &[Option<i64>]) -> Vec<String> {
    let mut v = vec!["* root".to_string()];
    for q in tree.queues.iter().skip(1) {
        let fence = if q.fenced { " (fence)" } else { "" };
        v.push(format!(" * {}: {}{fence}", q.name, prios[q.id].unwrap()));
    }
    v
}

/// Variant 1: every request is its own application (a pod group of one priority).
/// Each step schedules the first application of the effective order, then recomputes the
/// queue priorities; created times run against the document's order so FIFO cannot
/// produce it by accident.
#[test]
fn priority_document_table_one_group_per_task() {
    let tree = doc_tree();
    let n = PRIORITY_DOC_TASKS.len() as i64;
    let mut pending: Vec<App> =
        PRIORITY_DOC_TASKS.iter().enumerate().map(|(i, &(q, p))| app(&tree, &format!("{q}/P{p}"), q, p, n - i as i64)).collect();
    assert_eq!(before_list(&tree, &queue_priorities(&tree, &pending)), PRIORITY_DOC_BEFORE);
    let mut rows = Vec::new();
    for step in 1..=PRIORITY_DOC_TASKS.len() {
        let before = queue_priorities(&tree, &pending);
        let first = scheduling_order(&tree, &pending)[0];
        let done = pending.remove(first);
        let after = queue_priorities(&tree, &pending);
        rows.push(format!(
            "| {step} | {} | P{} | {} |",
            tree.queues[done.queue].path,
            done.priority,
            changes(&tree, done.queue, &before, &after)
        ));
    }
    assert!(pending.is_empty());
    assert_eq!(rows, PRIORITY_DOC_TABLE);
    assert!(queue_priorities(&tree, &pending).iter().all(|p| p.is_none()));
}

/// Variant 2: one application per leaf holding all its requests; as in YuniKorn the
/// application's priority is its highest pending request and drops when that is served.
#[test]
fn priority_document_table_one_application_per_queue() {
    let tree = doc_tree();
    let mut leaves: Vec<(QueueId, Vec<i64>)> = Vec::new();
    for &(q, p) in PRIORITY_DOC_TASKS {
        let id = tree.get(q).unwrap();
        match leaves.iter_mut().find(|(l, _)| *l == id) {
            Some((_, reqs)) => reqs.push(p),
            None => leaves.push((id, vec![p])),
        }
    }
    let apps_of = |leaves: &[(QueueId, Vec<i64>)]| -> Vec<App> {
        leaves
            .iter()
            .enumerate()
            .filter(|(_, (_, r))| !r.is_empty())
            .map(|(i, (q, r))| App { name: format!("app-{i}"), queue: *q, priority: *r.iter().max().unwrap(), created_at: -(i as i64) })
            .collect()
    };
    assert_eq!(before_list(&tree, &queue_priorities(&tree, &apps_of(&leaves))), PRIORITY_DOC_BEFORE);
    let mut rows = Vec::new();
    for step in 1..=PRIORITY_DOC_TASKS.len() {
        let apps = apps_of(&leaves);
        let before = queue_priorities(&tree, &apps);
        let chosen = &apps[scheduling_order(&tree, &apps)[0]];
        let (leaf, reqs) = leaves.iter_mut().find(|(l, _)| *l == chosen.queue).unwrap();
        let top = reqs.iter().enumerate().max_by_key(|&(_, &p)| p).map(|(i, _)| i).unwrap();
        let p = reqs.remove(top);
        let leaf = *leaf;
        let after = queue_priorities(&tree, &apps_of(&leaves));
        rows.push(format!("| {step} | {} | P{p} | {} |", tree.queues[leaf].path, changes(&tree, leaf, &before, &after)));
    }
    assert_eq!(rows, PRIORITY_DOC_TABLE);
}

/// The effective keys of semantics.md on the document's example.
#[test]
fn priority_document_effective_keys() {
    let tree = doc_tree();
    let key = |q: &str, p: i64| effective_key(&tree, tree.get(q).unwrap(), p).0;
    assert_eq!(key("root.system.system-high", 1), vec![1001]);
    assert_eq!(key("root.system.system-normal", 10), vec![10]);
    assert_eq!(key("root.system.system-low", 3), vec![-997]);
    assert_eq!(key("root.tenants.tenant-a.child-a-1", 8), vec![0, 10, 8]);
    assert_eq!(key("root.tenants.tenant-b.child-b-1", 9), vec![0, 0, 9]);
    assert_eq!(PriorityKey(vec![0, 10, 8]).to_string(), "[0, 10, 8]");
    assert_eq!(PriorityKey(vec![1001]).to_string(), "1001");
}

/// The embedded table is the seed document's, when the seed is at hand.
#[test]
fn priority_document_table_matches_the_seed_text() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/seeds/003_72d2ec8592b2ad0e.txt");
    let Ok(text) = std::fs::read_to_string(&path) else { return };
    let rows: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix('+'))
        .filter(|l| l.starts_with("| ") && l[2..].starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(rows, PRIORITY_DOC_TABLE);
    let start = text.lines().position(|l| l == "+* root").expect("the 'before' list");
    let before: Vec<&str> = text.lines().skip(start).take(PRIORITY_DOC_BEFORE.len()).map(|l| &l[1..]).collect();
    assert_eq!(before, PRIORITY_DOC_BEFORE);
}

const SMALL: &str = r#"
partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: ops
            properties: {priority.offset: 100}
            queues:
              - name: urgent
                properties: {priority.offset: "-5"}
          - name: batch
          - name: tenants
            properties: {priority.policy: fence, priority.offset: 50}
            queues:
              - name: a
              - name: b
                properties: {priority.offset: 7}
          - name: legacy
            properties: {application.sort.priority: disabled}
            queues:
              - name: x
              - name: y
          - name: plain
            properties: {application.sort.priority: disabled}
"#;

#[test]
fn offsets_add_along_unfenced_paths() {
    let t = tree_of(SMALL);
    let urgent = t.get("root.ops.urgent").unwrap();
    assert_eq!(effective_key(&t, urgent, 10).0, vec![105]);
    // The document's leaf example: offset 5, applications 10 and 20 -> 25, then 15.
    let t2 = tree_of("partitions: [{name: p, queues: [{name: q, properties: {priority.offset: '5'}}]}]");
    let q = t2.get("root.q").unwrap();
    let mut apps = vec![
        App { name: "a".into(), queue: q, priority: 10, created_at: 0 },
        App { name: "b".into(), queue: q, priority: 20, created_at: 1 },
    ];
    assert_eq!(queue_priorities(&t2, &apps)[q], Some(25));
    apps.remove(1);
    assert_eq!(queue_priorities(&t2, &apps)[q], Some(15));
    assert_eq!(queue_priorities(&t2, &[])[q], None);
}

#[test]
fn fence_hides_inner_priorities_and_keeps_them_inside() {
    let t = tree_of(SMALL);
    let apps = vec![
        app(&t, "huge-in-a", "root.tenants.a", 1_000_000, 0),
        app(&t, "b-3", "root.tenants.b", 3, 1),
        app(&t, "batch-51", "root.batch", 51, 2),
        app(&t, "batch-49", "root.batch", 49, 3),
    ];
    // tenants shows 50 outside: above batch 49, below batch 51, whatever its tasks ask.
    let keys = effective_keys(&t, &apps);
    assert_eq!(keys[0].0, vec![50, 1_000_000]);
    assert_eq!(keys[1].0, vec![50, 10], "unfenced b adds its offset 7 inside the fence");
    let order: Vec<&str> = scheduling_order(&t, &apps).iter().map(|&i| apps[i].name.as_str()).collect();
    assert_eq!(order, ["batch-51", "huge-in-a", "b-3", "batch-49"]);
    let prios = queue_priorities(&t, &apps);
    assert_eq!(prios[t.get("root.tenants").unwrap()], Some(50));
    assert_eq!(prios[t.get("root.tenants.b").unwrap()], Some(10));
    assert_eq!(prios[0], Some(51));
}

#[test]
fn disabled_sort_priority_shares_the_highest_key_fifo_among_them() {
    let t = tree_of(SMALL);
    assert!(!t.queues[t.get("root.legacy.x").unwrap()].sort_priority, "inherited from legacy");
    let apps = vec![
        app(&t, "x-high-late", "root.legacy.x", 90, 30),
        app(&t, "y-low-early", "root.legacy.y", 1, 10),
        app(&t, "x-low-mid", "root.legacy.x", 2, 20),
        app(&t, "batch-50", "root.batch", 50, 0),
        app(&t, "plain-1", "root.plain", 1, 5),
        app(&t, "batch-95", "root.batch", 95, 0),
    ];
    let keys = effective_keys(&t, &apps);
    assert_eq!(keys[0], PriorityKey(vec![90]));
    assert_eq!(keys[1], PriorityKey(vec![90]));
    assert_eq!(keys[2], PriorityKey(vec![90]));
    assert_eq!(keys[4], PriorityKey(vec![1]));
    let order: Vec<&str> = scheduling_order(&t, &apps).iter().map(|&i| apps[i].name.as_str()).collect();
    assert_eq!(order, ["batch-95", "y-low-early", "x-low-mid", "x-high-late", "batch-50", "plain-1"]);
}

#[test]
fn fifo_breaks_ties_then_input_order() {
    let t = tree_of(SMALL);
    let apps = vec![
        app(&t, "late", "root.batch", 5, 9),
        app(&t, "early", "root.batch", 5, 1),
        app(&t, "same-time-1", "root.ops.urgent", -90, 4), // -90 + 100 - 5 = 5
        app(&t, "same-time-2", "root.ops.urgent", -90, 4),
        app(&t, "higher", "root.batch", 6, 100),
    ];
    let order: Vec<&str> = scheduling_order(&t, &apps).iter().map(|&i| apps[i].name.as_str()).collect();
    assert_eq!(order, ["higher", "early", "same-time-1", "same-time-2", "late"]);
}

#[test]
fn without_offsets_and_fences_the_key_is_the_priority() {
    let t = tree_of("partitions: [{name: d, queues: [{name: root, queues: [{name: a, queues: [{name: b}]}]}]}]");
    assert_eq!(effective_key(&t, t.get("root.a.b").unwrap(), -42), PriorityKey(vec![-42]));
}

#[test]
fn parses_limits_properties_and_paths() {
    let t = tree_of(
        r#"
partitions:
  - name: default
    placementrules: [{name: tag, value: namespace, create: true}]
    queues:
      - name: root
        submitacl: "*"
        maxapplications: 20
        queues:
          - name: tenants
            maxapplications: 10
            resources:
              guaranteed: {vcore: 4, memory: 8Gi}
              max: {vcore: 10, memory: 64Gi, nvidia.com/gpu: 8}
            queues:
              - name: a
                maxapplications: 10
                properties:
                  application.sort.policy: FAIR
                  preemption.policy: fence
                  preemption.delay: 30s
                resources:
                  guaranteed: {cpu: 500m}
                  max: {cpu: "2.5", memory: 16G}
              - name: b
                maxapplications: 5
                parent: true
"#,
    );
    assert_eq!(t.partition, "default");
    let tenants = &t.queues[t.get("root.tenants").unwrap()];
    assert_eq!(tenants.max["cpu"], 10_000, "vcore: 10 is ten cores");
    assert_eq!(tenants.max["memory"], 64 << 30);
    assert_eq!(tenants.guaranteed["cpu"], 4000);
    let a = &t.queues[t.get("root.tenants.a").unwrap()];
    assert_eq!((a.path.as_str(), a.source.as_str()), ("root.tenants.a", "partitions[0].queues[0].queues[0].queues[0]"));
    assert_eq!(a.parent, Some(tenants.id));
    assert_eq!(a.sort_policy, SortPolicy::Fair);
    assert!(t.rejects_gangs(a.id));
    assert_eq!(a.preemption_policy, Some(PreemptionPolicy::Fence));
    assert_eq!(a.max["cpu"], 2500);
    assert_eq!(a.max["memory"], 16_000_000_000);
    let b = t.get("root.tenants.b").unwrap();
    assert!(!t.is_leaf(b), "parent: true without children");
    assert_eq!(
        t.leaf("root.tenants.b", "podGroups[0].queue").unwrap_err().to_string(),
        "podGroups[0].queue: root.tenants.b is a parent queue; applications run in leaf queues"
    );
    assert!(t.leaf("root.tenants.zz", "p").unwrap_err().message.contains("unknown queue"));
    assert!(t.leaf("tenants.a", "p").unwrap_err().message.contains("paths start at root"));
    assert_eq!(t.leaf("root.tenants.a", "p"), Ok(a.id));
    // Dense ids in depth-first file order, parents first.
    let paths: Vec<&str> = t.queues.iter().map(|q| q.path.as_str()).collect();
    assert_eq!(paths, ["root", "root.tenants", "root.tenants.a", "root.tenants.b"]);
    assert!(t.is_under(a.id, 0) && !t.is_under(tenants.id, a.id));
    let text = render(&t, &[]);
    assert!(text.contains("max {cpu: 10, memory: 64Gi, nvidia.com/gpu: 8}"), "{text}");
}

#[test]
fn a_list_without_root_is_wrapped_in_an_implicit_root() {
    let t = tree_of("partitions: [{name: d, queues: [{name: a}, {name: b, queues: [{name: c}]}]}]");
    let paths: Vec<&str> = t.queues.iter().map(|q| q.path.as_str()).collect();
    assert_eq!(paths, ["root", "root.a", "root.b", "root.b.c"]);
    assert_eq!(t.queues[t.get("root.b.c").unwrap()].source, "partitions[0].queues[1].queues[0]");
}

fn instance_err(queues_yaml: &str) -> String {
    let text = format!("nodes: []\nqueues:\n{queues_yaml}");
    // Shape errors (unknown keys, duplicate keys) come from reading the document.
    let doc: InstanceDoc = match crate::wire::from_text(&text) {
        Ok(d) => d,
        Err(e) => return e.to_string(),
    };
    QueueTree::from_instance(&doc).err().map(|e| e.to_string()).unwrap_or_else(|| "accepted".into())
}

fn yaml_err(text: &str) -> String {
    parse_queues_yaml(text).err().map(|e| e.to_string()).unwrap_or_else(|| "accepted".into())
}

#[test]
fn validation_errors_name_the_path() {
    let root = |children: &str| format!("  - name: root\n    queues:\n{children}");
    assert_eq!(
        instance_err(&root("      - {name: a}\n      - name: b\n        properties: {priority.offset: high}\n")),
        "queues[0].queues[1].properties.priority.offset: invalid value \"high\" (expected an integer)"
    );
    assert_eq!(
        instance_err(&root("      - name: b\n        properties: {priority.policy: strict}\n")),
        "queues[0].queues[0].properties.priority.policy: invalid value \"strict\" (expected default or fence)"
    );
    assert!(instance_err(&root("      - name: b\n        properties: {application.sort.policy: random}\n"))
        .starts_with("queues[0].queues[0].properties.application.sort.policy: invalid value"));
    assert!(instance_err(&root("      - name: b\n        properties: {application.sort.priority: yes}\n"))
        .starts_with("queues[0].queues[0].properties.application.sort.priority: invalid value"));
    assert!(instance_err(&root("      - name: b\n        properties: {preemption.policy: never}\n"))
        .starts_with("queues[0].queues[0].properties.preemption.policy: invalid value"));
    assert!(instance_err(&root("      - name: b\n        properties: {priority.offset: 3000000000}\n")).contains("outside int32"));
    assert!(instance_err(&root("      - name: b\n        properties: {sort: fifo}\n"))
        .starts_with("queues[0].queues[0].properties.sort: unknown queue property \"sort\""));
    assert!(instance_err(&root("      - {name: a}\n      - {name: A}\n"))
        .starts_with("queues[0].queues[1].name: duplicate queue name \"A\" under root"));
    assert_eq!(
        instance_err(&root("      - name: t\n        maxapplications: 5\n        queues:\n          - {name: a, maxapplications: 6}\n")),
        "queues[0].queues[0].queues[0].maxapplications: 6 exceeds maxapplications 5 of root.t"
    );
    assert!(instance_err(&root("      - {name: a, maxapplications: 0}\n"))
        .starts_with("queues[0].queues[0].maxapplications: must be at least 1"));
    assert!(instance_err(&root("      - name: a\n        resources: {max: {memory: 12Q}}\n"))
        .starts_with("queues[0].queues[0].resources.max.memory: invalid quantity \"12Q\""));
    assert!(instance_err(&root("      - name: a\n        resources: {max: {vcore: -1}}\n"))
        .starts_with("queues[0].queues[0].resources.max.vcore: negative quantity"));
    assert!(instance_err(&root("      - name: a\n        resources: {max: {vcore: 2, cpu: 2}}\n"))
        .starts_with("queues[0].queues[0].resources.max.cpu: \"cpu\" names the same resource"));
    assert!(instance_err(&root("      - name: a\n        resources: {guaranteed: {cpu: 3}, max: {cpu: 2}}\n"))
        .starts_with("queues[0].queues[0].resources.guaranteed.cpu: guaranteed 3 exceeds max 2"));
    assert_eq!(
        instance_err(&root("      - name: t\n        resources: {max: {memory: 1Gi}}\n        queues:\n          - name: a\n            resources: {max: {memory: 2Gi}}\n")),
        "queues[0].queues[0].queues[0].resources.max.memory: max 2Gi exceeds max 1Gi of root.t"
    );
    assert!(instance_err(&root(
        "      - name: t\n        resources: {guaranteed: {cpu: 2}}\n        queues:\n          - {name: a, resources: {guaranteed: {cpu: 1500m}}}\n          - {name: b, resources: {guaranteed: {cpu: 1}}}\n"
    ))
    .starts_with("queues[0].queues[0].resources.guaranteed.cpu: the children's guaranteed 2500m sum above"));
    assert!(instance_err("  - name: root\n    resources: {max: {cpu: 1}}\n")
        .starts_with("queues[0].resources: the root queue carries no resource limits"));
    assert!(instance_err("  - {name: a}\n  - {name: root}\n").starts_with("queues[1].name: root must be the only top-level queue"));
    assert!(instance_err("  - {name: Root}\n").starts_with("queues[0].name: the root queue is named \"root\""));
    assert!(instance_err("  - {name: root, parent: false}\n").starts_with("queues[0].parent: root must be a parent queue"));
    assert!(instance_err(&root("      - name: a\n        parent: false\n        queues: [{name: b}]\n"))
        .starts_with("queues[0].queues[0].parent: a queue with child queues cannot be a leaf"));
    assert!(instance_err(&root("      - {name: a.b}\n")).starts_with("queues[0].queues[0].name: invalid queue name \"a.b\""));
    assert!(instance_err(&root("      - {name: a, limits: []}\n")).starts_with("queues[0].queues[0].limits: unknown field `limits`"));
    assert!(instance_err(&root("      - {name: a, properties: {priority.offset: 1, priority.offset: 2}}\n")).contains("duplicate key"));
    assert!(
        yaml_err("partitions: [{name: a, queues: [{name: x}]}, {name: b, queues: [{name: y}]}]").starts_with("partitions: 2 partitions")
    );
    assert!(yaml_err("partitions: [{name: a, queues: [{name: root, queues: [{name: q, resources: {max: {vcore: x}}}]}]}]")
        .starts_with("partitions[0].queues[0].queues[0].resources.max.vcore: invalid quantity"));
    assert!(yaml_err("partitions: [{name: a, queues: [{name: x, colour: red}]}]")
        .starts_with("partitions[0].queues[0].colour: unknown field `colour`"));
    assert_eq!(instance_err(&root("      - name: a\n        properties: {preemption.delay: 30s}\n")), "accepted");
}

#[test]
fn apps_from_an_instance_document() {
    let doc: InstanceDoc = crate::wire::from_text(
        r#"
priorityClasses: [{name: high, value: 1000}]
queues:
  - name: root
    queues:
      - {name: a, properties: {priority.offset: 5}}
      - {name: p, parent: true}
podGroups:
  - {name: g1, queue: root.a, priorityClassName: high, tasks: []}
  - {name: g2, queue: root.a, priority: 3, createdAt: 50, tasks: []}
"#,
    )
    .unwrap();
    let tree = QueueTree::from_instance(&doc).unwrap().unwrap();
    let apps = apps_from_doc(&doc, &tree).unwrap();
    assert_eq!((apps[0].priority, apps[0].created_at, apps[1].created_at), (1000, 0, 50));
    assert_eq!(effective_keys(&tree, &apps)[0], PriorityKey(vec![1005]));
    let mut bad = doc.clone();
    bad.pod_groups[1].queue = Some("root.p".into());
    assert!(apps_from_doc(&bad, &tree).unwrap_err().to_string().starts_with("podGroups[1].queue: root.p is a parent queue"));
    // Without a queue a group is in root.default, which this tree lacks.
    bad.pod_groups[1].queue = None;
    assert!(apps_from_doc(&bad, &tree).unwrap_err().to_string().starts_with("podGroups[1].queue: unknown queue \"root.default\""));
    // The engine model ranks pending groups by those keys (term 1): g1 (1005) above g2 (8).
    let text = "nodes: [{name: n0, allocatable: {cpu: 1}}]\npriorityClasses: [{name: high, value: 1000}]\nqueues:\n  - name: root\n    queues: [{name: a, properties: {priority.offset: 5}}]\npodGroups:\n  - {name: g1, queue: root.a, priorityClassName: high, tasks: [{name: t, count: 1, requests: {cpu: 1}}]}\n  - {name: g2, queue: root.a, priority: 3, tasks: [{name: t, count: 1, requests: {cpu: 1}}]}\n";
    let inst = crate::Instance::from_text(text).unwrap_or_else(|e| panic!("{e}"));
    assert!(inst.groups[0].rank > inst.groups[1].rank);
    assert_eq!((inst.level_key(inst.groups[0].rank), inst.level_key(inst.groups[1].rank)), (PriorityKey(vec![1005]), PriorityKey(vec![8])));
}

#[test]
fn the_bundled_sample_parses() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("instances/queues.yaml");
    let t = parse_queues_yaml(&std::fs::read_to_string(path).unwrap()).unwrap_or_else(|e| panic!("{e}"));
    assert!(t.queues.iter().any(|q| q.fenced && q.offset != 0), "a fenced queue with an offset");
    assert!(t.queues.iter().any(|q| t.is_leaf(q.id) && q.sort_policy == SortPolicy::Fair), "a fair leaf");
    assert!(t.queues.iter().any(|q| !q.max.is_empty() && !q.guaranteed.is_empty()), "guaranteed and max");
}
