//! The synthetic traces of the paper's temporal-reasoning study (§5.2, appendix D): each step
//! an observation of one or more entities, each with an animal, a shape, a color and a number,
//! drawn at random and independently, rendered as a sentence ("Step 5: Observed a red oval
//! (number 19) alongside a deer"). A proposition is a color and shape seen together ("a red
//! oval is observed", atom `red_oval`); the propositions of a trace are drawn anew for it, and
//! random entities never show them, so the labels of every step are known exactly: only the
//! entities a plan places carry a proposition.
//!
//! A *plan* says which propositions are placed at each step (`plan[i]`: indices into the
//! trace's propositions); the plans of the formulas are built here with the truth value they
//! were built to have.

use fastrand::Rng;

/// Animals of the entities.
pub const ANIMALS: [&str; 12] = [
    "deer", "fox", "owl", "bear", "wolf", "hare", "lynx", "crow", "seal", "boar", "moose", "otter",
];
/// Shapes of the entities.
pub const SHAPES: [&str; 8] = [
    "oval", "square", "triangle", "star", "circle", "hexagon", "diamond", "cross",
];
/// Colors of the entities.
pub const COLORS: [&str; 8] = [
    "red", "blue", "green", "yellow", "purple", "orange", "white", "black",
];

/// One observed entity (indices into [`ANIMALS`], [`SHAPES`], [`COLORS`]; a number 1 to 99).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entity {
    /// Index into [`ANIMALS`].
    pub animal: usize,
    /// Index into [`SHAPES`].
    pub shape: usize,
    /// Index into [`COLORS`].
    pub color: usize,
    /// 1 to 99.
    pub number: u32,
}

/// A proposition: a color and a shape seen together at a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Prop {
    /// Index into [`COLORS`].
    pub color: usize,
    /// Index into [`SHAPES`].
    pub shape: usize,
}

impl Prop {
    /// The atom's name, `red_oval`.
    pub fn name(&self) -> String {
        format!("{}_{}", COLORS[self.color], SHAPES[self.shape])
    }

    /// `a red oval`.
    pub fn noun(&self) -> String {
        let c = COLORS[self.color];
        format!("{} {c} {}", article(c), SHAPES[self.shape])
    }

    /// Whether `e` shows this proposition.
    pub fn holds(&self, e: &Entity) -> bool {
        e.color == self.color && e.shape == self.shape
    }
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// `k` distinct propositions drawn at random (`k` ≤ 64).
pub fn draw_props(rng: &mut Rng, k: usize) -> Vec<Prop> {
    let mut all: Vec<Prop> = (0..COLORS.len())
        .flat_map(|color| (0..SHAPES.len()).map(move |shape| Prop { color, shape }))
        .collect();
    rng.shuffle(&mut all);
    all.truncate(k);
    all
}

/// A generated trace: the entities of each step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// Step 1 first; each step's entities.
    pub steps: Vec<Vec<Entity>>,
}

impl Trace {
    /// The trace rendered for a judge, one line per step: `Step 5: Observed a red oval (number
    /// 19) alongside a deer; a blue star (number 3) alongside an owl`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, step) in self.steps.iter().enumerate() {
            let seen: Vec<String> = step
                .iter()
                .map(|e| {
                    let p = Prop {
                        color: e.color,
                        shape: e.shape,
                    };
                    let a = ANIMALS[e.animal];
                    format!(
                        "{} (number {}) alongside {} {a}",
                        p.noun(),
                        e.number,
                        article(a)
                    )
                })
                .collect();
            out.push_str(&format!("Step {}: Observed {}\n", i + 1, seen.join("; ")));
        }
        out
    }

    /// The labels of each step: the names of `props` shown at it.
    pub fn labels(&self, props: &[Prop]) -> Vec<Vec<String>> {
        self.steps
            .iter()
            .map(|s| {
                props
                    .iter()
                    .filter(|p| s.iter().any(|e| p.holds(e)))
                    .map(Prop::name)
                    .collect()
            })
            .collect()
    }
}

/// Renders `plan` with `entities` entities per step: the placed propositions first take an
/// entity each (at random positions), the others are random entities showing none of `props`.
pub fn realize(rng: &mut Rng, plan: &[Vec<usize>], props: &[Prop], entities: usize) -> Trace {
    let random = |rng: &mut Rng| loop {
        let e = Entity {
            animal: rng.usize(..ANIMALS.len()),
            shape: rng.usize(..SHAPES.len()),
            color: rng.usize(..COLORS.len()),
            number: rng.u32(1..100),
        };
        if !props.iter().any(|p| p.holds(&e)) {
            return e;
        }
    };
    let steps = plan
        .iter()
        .map(|placed| {
            let mut step: Vec<Entity> = (0..entities.max(placed.len()))
                .map(|_| random(rng))
                .collect();
            let mut slots: Vec<usize> = (0..step.len()).collect();
            rng.shuffle(&mut slots);
            for (&p, &slot) in placed.iter().zip(&slots) {
                step[slot].color = props[p].color;
                step[slot].shape = props[p].shape;
            }
            step
        })
        .collect();
    Trace { steps }
}

/// A plan for `F(A & X F B)` (A = proposition 0, B = 1) with B `gap` steps after A, and 0 to 2
/// steps before and after. Satisfying: A then B. Violating, one of: B then A; A alone; B alone.
pub fn simple_plan(rng: &mut Rng, gap: usize, satisfy: bool) -> Vec<Vec<usize>> {
    let gap = gap.max(1);
    let (pre, post) = (rng.usize(0..=2), rng.usize(0..=2));
    let mut plan = vec![Vec::new(); pre + gap + 1 + post];
    let (first, second) = if satisfy {
        (Some(0), Some(1))
    } else {
        match rng.u8(0..3) {
            0 => (Some(1), Some(0)),
            1 => (Some(0), None),
            _ => (None, Some(1)),
        }
    };
    plan[pre].extend(first);
    plan[pre + gap].extend(second);
    plan
}

/// The paper's tree formula (`tree_trace_generator.py` of praal/llm-monitoring): a full tree of
/// branching `b` and depth `d` (`d + 1` levels of nodes `n0`, `n1`, ...) and a shared sink
/// `sink`: `F(n0 & X F((n1 & X F(..)) | (n2 & X F(..))))` where a leaf `l` is `l & X F sink`.
/// Returns the formula and the node names (root first, breadth first), the sink last.
pub fn tree_formula(b: usize, d: usize) -> (String, Vec<String>) {
    let total: usize = (0..=d).map(|l| b.pow(l as u32)).sum();
    let mut names: Vec<String> = (0..total).map(|i| format!("n{i}")).collect();
    names.push("sink".into());
    fn node(i: usize, level: usize, b: usize, d: usize) -> String {
        if level == d {
            return format!("n{i} & X F sink");
        }
        let kids: Vec<String> = (0..b)
            .map(|k| format!("({})", node(i * b + 1 + k, level + 1, b, d)))
            .collect();
        format!("n{i} & X F({})", kids.join(" | "))
    }
    (format!("F({})", node(0, 0, b, d)), names)
}

/// The root-to-leaf paths of the tree of [`tree_formula`] (node indices), each ending at the
/// sink (index `sink`).
pub fn tree_paths(b: usize, d: usize, sink: usize) -> Vec<Vec<usize>> {
    let mut paths = vec![vec![0usize]];
    for _ in 0..d {
        paths = paths
            .into_iter()
            .flat_map(|p| {
                let last = *p.last().expect("paths are not empty");
                (0..b).map(move |k| {
                    let mut q = p.clone();
                    q.push(last * b + 1 + k);
                    q
                })
            })
            .collect();
    }
    for p in &mut paths {
        p.push(sink);
    }
    paths
}

/// A plan for the tree of branching `b`, depth `d` (propositions: the nodes, then the sink):
/// a random root-to-sink path placed in order, `gap` steps apart; violating, one node of the
/// path (any, the sink included) left out, so that no path is complete.
pub fn tree_plan(rng: &mut Rng, b: usize, d: usize, gap: usize, satisfy: bool) -> Vec<Vec<usize>> {
    let gap = gap.max(1);
    let nodes: usize = (0..=d).map(|l| b.pow(l as u32)).sum();
    let paths = tree_paths(b, d, nodes);
    let path = &paths[rng.usize(..paths.len())];
    let skip = (!satisfy).then(|| rng.usize(..path.len()));
    let (pre, post) = (rng.usize(0..=2), rng.usize(0..=2));
    let mut plan = vec![Vec::new(); pre + (path.len() - 1) * gap + 1 + post];
    for (k, &n) in path.iter().enumerate() {
        if Some(k) != skip {
            plan[pre + k * gap].push(n);
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendering_and_labels() {
        let props = [Prop { color: 0, shape: 0 }, Prop { color: 1, shape: 3 }];
        let t = Trace {
            steps: vec![
                vec![Entity {
                    animal: 0,
                    shape: 0,
                    color: 0,
                    number: 19,
                }],
                vec![
                    Entity {
                        animal: 2,
                        shape: 1,
                        color: 5,
                        number: 3,
                    },
                    Entity {
                        animal: 1,
                        shape: 3,
                        color: 1,
                        number: 7,
                    },
                ],
            ],
        };
        assert_eq!(
            t.render(),
            "Step 1: Observed a red oval (number 19) alongside a deer\n\
             Step 2: Observed an orange square (number 3) alongside an owl; a blue star (number 7) alongside a fox\n"
        );
        assert_eq!(t.labels(&props), vec![vec!["red_oval"], vec!["blue_star"]]);
    }

    #[test]
    fn random_entities_never_show_a_proposition() {
        let mut rng = Rng::with_seed(1);
        let props = draw_props(&mut rng, 40);
        let plan = vec![vec![], vec![3], vec![], vec![7, 9]];
        for _ in 0..50 {
            let t = realize(&mut rng, &plan, &props, 4);
            let l = t.labels(&props);
            assert_eq!(l[0], Vec::<String>::new());
            assert_eq!(l[1], vec![props[3].name()]);
            assert_eq!(l[2], Vec::<String>::new());
            assert_eq!(l[3].len(), 2);
            assert!(t.steps.iter().all(|s| s.len() == 4));
        }
    }

    #[test]
    fn tree_formula_and_paths_by_hand() {
        let (f, names) = tree_formula(2, 1);
        assert_eq!(f, "F(n0 & X F((n1 & X F sink) | (n2 & X F sink)))");
        assert_eq!(names, ["n0", "n1", "n2", "sink"]);
        assert_eq!(tree_paths(2, 1, 3), vec![vec![0, 1, 3], vec![0, 2, 3]]);
        assert_eq!(tree_paths(2, 2, 7)[3], vec![0, 2, 6, 7]);
    }
}
