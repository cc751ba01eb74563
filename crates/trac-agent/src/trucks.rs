//! The IPC-Trucks environment of the paper's §5.3 (appendix F.3.2), with 5 packages.
//!
//! One truck `truck1` with three areas `a1`, `a2`, `a3` (`a1` nearest the door), locations
//! `l1`, `l2`, `l3` (all connected); the truck starts at `l2`, every package at `l1`, and every
//! package must be delivered at `l2` (the task of the paper's code, `commands/truck-task`).
//! Actions, in the paper's wording (case-insensitive, decoration such as `$ACTION: ...$`
//! ignored):
//!
//! - `LOAD package1 into area a1 at location l1`: needs the package at the truck's location,
//!   the target area free and every area closer to the door free;
//! - `UNLOAD package1 from area a1 at location l2`: needs the package in that area and every
//!   area closer to the door free; the package is then at the truck's location;
//! - `DRIVE truck1 from l1 to l2`;
//! - `DELIVER package1 at location l2`: needs the package unloaded at the truck's location,
//!   which must be its destination; reward 1 the first time;
//! - `DONE` ends the episode; `WAIT` does nothing (the no-op).
//!
//! An action that does not parse, or whose preconditions fail, changes nothing and its
//! observation says why (never an error). The episode ends when every package is delivered or
//! the agent says `DONE`.
//!
//! # Ground-truth labels
//! Each step is labeled from the environment's state and the action as parsed (whether or not
//! it could be executed: the agent did attempt it): `free(a1)`..`free(a3)` for the areas free
//! *before* the action; `load`, `load_into(aN)`, `load_pkg(packageN)`, `unload`,
//! `unload_from(aN)`, `unload_pkg(packageN)`, `drive`, `drive_to(lN)`, `deliver(packageN)`,
//! `deliver_at(lN)`, `done`, `wait`. An unparsable action has only the state labels. The spec
//! `examples/specs/trucks-5.ron` states the paper's 15 constraints over these propositions.

use crate::env::{EnvError, Environment, Outcome};

/// Number of packages.
pub const PACKAGES: usize = 5;
/// Number of truck areas.
pub const AREAS: usize = 3;
/// Number of locations.
pub const LOCATIONS: usize = 3;

/// Where a package is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// At location `l{0+1}`, not delivered.
    At(usize),
    /// In truck area `a{0+1}`.
    In(usize),
    /// Delivered at location `l{0+1}`.
    Delivered(usize),
}

/// A parsed action (indices are 0-based; `None` where the action does not name one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// LOAD.
    Load {
        /// Package.
        pkg: Option<usize>,
        /// Area (may be out of range: `a4` names area index 3).
        area: Option<usize>,
        /// Location written in the action.
        at: Option<usize>,
    },
    /// UNLOAD.
    Unload {
        /// Package.
        pkg: Option<usize>,
        /// Area.
        area: Option<usize>,
        /// Location written in the action.
        at: Option<usize>,
    },
    /// DRIVE.
    Drive {
        /// Destination.
        to: Option<usize>,
    },
    /// DELIVER.
    Deliver {
        /// Package.
        pkg: Option<usize>,
        /// Location written in the action.
        at: Option<usize>,
    },
    /// DONE.
    Done,
    /// WAIT (no-op).
    Wait,
}

/// The Trucks environment (see the module docs).
#[derive(Clone, Debug)]
pub struct Trucks {
    truck: usize,
    areas: [Option<usize>; AREAS],
    packages: [Place; PACKAGES],
    goals: [usize; PACKAGES],
    done: bool,
}

impl Default for Trucks {
    fn default() -> Self {
        Trucks::new()
    }
}

/// `prefix` followed by a 1-based number, as a 0-based index (`package3` -> 2).
fn numbered(token: &str, prefix: &str) -> Option<usize> {
    let rest = token.strip_prefix(prefix)?;
    if rest.is_empty() || !rest.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    rest.parse::<usize>().ok()?.checked_sub(1)
}

/// Parses an action in the paper's wording; `None` when no verb is recognized.
///
/// The verb is the first of `load`, `unload`, `drive`, `deliver`, `done`, `wait` among the
/// words (words are split at anything but letters and digits, so `to-l1` reads `to l1` and
/// `$ACTION:` is skipped); the package is the first `packageN`, the area the first `aN`; the
/// location of DRIVE is the one after `to` (else the last one named), of the others the first.
pub fn parse_action(text: &str) -> Option<Action> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let verb_at = words.iter().position(|w| {
        matches!(
            *w,
            "load" | "unload" | "drive" | "deliver" | "done" | "wait"
        )
    })?;
    let rest = &words[verb_at + 1..];
    let pkg = rest.iter().find_map(|w| numbered(w, "package"));
    let area = rest.iter().find_map(|w| numbered(w, "a"));
    let locs: Vec<usize> = rest.iter().filter_map(|w| numbered(w, "l")).collect();
    let first_loc = locs.first().copied();
    Some(match words[verb_at] {
        "load" => Action::Load {
            pkg,
            area,
            at: first_loc,
        },
        "unload" => Action::Unload {
            pkg,
            area,
            at: first_loc,
        },
        "drive" => {
            let after_to = rest
                .iter()
                .position(|w| *w == "to")
                .and_then(|i| rest[i + 1..].iter().find_map(|w| numbered(w, "l")));
            Action::Drive {
                to: after_to.or(locs.last().copied()),
            }
        }
        "deliver" => Action::Deliver { pkg, at: first_loc },
        "done" => Action::Done,
        _ => Action::Wait,
    })
}

impl Trucks {
    /// The paper's problem: truck at `l2`, packages at `l1`, all to be delivered at `l2`.
    pub fn new() -> Trucks {
        Trucks {
            truck: 1,
            areas: [None; AREAS],
            packages: [Place::At(0); PACKAGES],
            goals: [1; PACKAGES],
            done: false,
        }
    }

    /// The truck's location (0-based).
    pub fn truck(&self) -> usize {
        self.truck
    }

    /// Where package `p` (0-based) is.
    pub fn package(&self, p: usize) -> Place {
        self.packages[p]
    }

    /// The package in area `a` (0-based), if any.
    pub fn area(&self, a: usize) -> Option<usize> {
        self.areas[a]
    }

    /// The destination of package `p` (0-based).
    pub fn goal(&self, p: usize) -> usize {
        self.goals[p]
    }

    /// Number of packages delivered at their destination.
    pub fn delivered(&self) -> usize {
        self.packages
            .iter()
            .filter(|p| matches!(p, Place::Delivered(_)))
            .count()
    }

    /// Whether the episode is over.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The ground-truth labels of `action` in the current state (see the module docs).
    pub fn labels(&self, action: Option<&Action>) -> Vec<String> {
        let mut out: Vec<String> = (0..AREAS)
            .filter(|&a| self.areas[a].is_none())
            .map(|a| format!("free(a{})", a + 1))
            .collect();
        let pkg = |p: &Option<usize>| p.map(|p| format!("package{}", p + 1));
        match action {
            None => {}
            Some(Action::Load { pkg: p, area, .. }) => {
                out.push("load".into());
                if let Some(a) = area {
                    out.push(format!("load_into(a{})", a + 1));
                }
                if let Some(p) = pkg(p) {
                    out.push(format!("load_pkg({p})"));
                }
            }
            Some(Action::Unload { pkg: p, area, .. }) => {
                out.push("unload".into());
                if let Some(a) = area {
                    out.push(format!("unload_from(a{})", a + 1));
                }
                if let Some(p) = pkg(p) {
                    out.push(format!("unload_pkg({p})"));
                }
            }
            Some(Action::Drive { to }) => {
                out.push("drive".into());
                if let Some(l) = to {
                    out.push(format!("drive_to(l{})", l + 1));
                }
            }
            Some(Action::Deliver { pkg: p, at }) => {
                if let Some(p) = pkg(p) {
                    out.push(format!("deliver({p})"));
                }
                if let Some(l) = at {
                    out.push(format!("deliver_at(l{})", l + 1));
                }
            }
            Some(Action::Done) => out.push("done".into()),
            Some(Action::Wait) => out.push("wait".into()),
        }
        out
    }

    fn blocking(&self, area: usize) -> Option<(usize, usize)> {
        (0..area).find_map(|a| self.areas[a].map(|p| (a, p)))
    }

    /// Why `area` cannot be reached: the first occupied area closer to the exit.
    fn blocked(&self, area: usize) -> Option<String> {
        self.blocking(area).map(|(b, q)| {
            format!(
                "area a{} is occupied by package{} (areas closer to the exit must be free)",
                b + 1,
                q + 1
            )
        })
    }

    /// Executes a parsed action: `(observation, reward)`.
    fn execute(&mut self, action: &Action) -> (String, f64) {
        match action {
            Action::Load { pkg, area, at } => self.load(*pkg, *area, at),
            Action::Unload { pkg, area, at } => self.unload(*pkg, *area, at),
            Action::Drive { to } => self.drive(*to),
            Action::Deliver { pkg, at } => self.deliver(*pkg, at),
            Action::Done => {
                self.done = true;
                (
                    format!(
                        "You ended the episode with {} of {PACKAGES} packages delivered.",
                        self.delivered()
                    ),
                    0.0,
                )
            }
            Action::Wait => ("You wait. Nothing changed.".into(), 0.0),
        }
    }

    /// `LOAD`: a package at the truck's location into a free area with the areas before it free.
    fn load(
        &mut self,
        pkg: Option<usize>,
        area: Option<usize>,
        at: &Option<usize>,
    ) -> (String, f64) {
        let (Some(p), Some(a)) = (pkg, area) else {
            return cannot(
                "LOAD",
                "say which package and which area, e.g. `LOAD package1 into area a1 at location l1`".into(),
            );
        };
        let what = format!("LOAD package{} into area a{}", p + 1, a + 1);
        if p >= PACKAGES {
            return cannot(&what, format!("there is no package{}", p + 1));
        }
        if a >= AREAS {
            return cannot(&what, format!("truck1 has no area a{}", a + 1));
        }
        if let Err(e) = location_ok(at, self.truck) {
            return cannot(&what, e);
        }
        if self.packages[p] != Place::At(self.truck) {
            return cannot(
                &what,
                format!(
                    "package{} is not at l{} where truck1 is ({})",
                    p + 1,
                    self.truck + 1,
                    self.describe(p)
                ),
            );
        }
        if let Some(q) = self.areas[a] {
            return cannot(
                &what,
                format!("area a{} is occupied by package{}", a + 1, q + 1),
            );
        }
        if let Some(why) = self.blocked(a) {
            return cannot(&what, why);
        }
        self.areas[a] = Some(p);
        self.packages[p] = Place::In(a);
        (
            format!(
                "You loaded package{} into area a{} of truck1 at l{}.",
                p + 1,
                a + 1,
                self.truck + 1
            ),
            0.0,
        )
    }

    /// `UNLOAD`: a package in the truck out of its area, with the areas before it free.
    fn unload(
        &mut self,
        pkg: Option<usize>,
        area: Option<usize>,
        at: &Option<usize>,
    ) -> (String, f64) {
        let Some(p) = pkg else {
            return cannot(
                "UNLOAD",
                "say which package, e.g. `UNLOAD package1 from area a1 at location l2`".into(),
            );
        };
        if p >= PACKAGES {
            return cannot("UNLOAD", format!("there is no package{}", p + 1));
        }
        let Place::In(actual) = self.packages[p] else {
            return cannot(
                &format!("UNLOAD package{}", p + 1),
                format!("package{} is not in truck1 ({})", p + 1, self.describe(p)),
            );
        };
        let a = area.unwrap_or(actual);
        let what = format!("UNLOAD package{} from area a{}", p + 1, a + 1);
        if a != actual {
            return cannot(
                &what,
                format!("package{} is in area a{}", p + 1, actual + 1),
            );
        }
        if let Err(e) = location_ok(at, self.truck) {
            return cannot(&what, e);
        }
        if let Some(why) = self.blocked(a) {
            return cannot(&what, why);
        }
        self.areas[a] = None;
        self.packages[p] = Place::At(self.truck);
        (
            format!(
                "You unloaded package{} from area a{} at l{}.",
                p + 1,
                a + 1,
                self.truck + 1
            ),
            0.0,
        )
    }

    /// `DRIVE`: the truck to another location.
    fn drive(&mut self, to: Option<usize>) -> (String, f64) {
        let Some(l) = to else {
            return cannot(
                "DRIVE",
                "say where to, e.g. `DRIVE truck1 from l2 to l1`".into(),
            );
        };
        if l >= LOCATIONS {
            return cannot("DRIVE", format!("there is no location l{}", l + 1));
        }
        if l == self.truck {
            return cannot("DRIVE", format!("truck1 is already at l{}", l + 1));
        }
        let from = self.truck;
        self.truck = l;
        (
            format!("You drove truck1 from l{} to l{}.", from + 1, l + 1),
            0.0,
        )
    }

    /// `DELIVER`: an unloaded package at its destination (reward 1).
    fn deliver(&mut self, pkg: Option<usize>, at: &Option<usize>) -> (String, f64) {
        let Some(p) = pkg else {
            return cannot(
                "DELIVER",
                "say which package, e.g. `DELIVER package1 at location l2`".into(),
            );
        };
        if p >= PACKAGES {
            return cannot("DELIVER", format!("there is no package{}", p + 1));
        }
        let what = format!("DELIVER package{}", p + 1);
        if let Err(e) = location_ok(at, self.truck) {
            return cannot(&what, e);
        }
        if self.packages[p] != Place::At(self.truck) {
            return cannot(
                &what,
                format!(
                    "package{} is not unloaded at l{} where truck1 is ({})",
                    p + 1,
                    self.truck + 1,
                    self.describe(p)
                ),
            );
        }
        if self.goals[p] != self.truck {
            return cannot(
                &what,
                format!(
                    "the destination of package{} is l{}",
                    p + 1,
                    self.goals[p] + 1
                ),
            );
        }
        self.packages[p] = Place::Delivered(self.truck);
        if self.delivered() == PACKAGES {
            self.done = true;
        }
        (
            format!(
                "You delivered package{} at l{}. {} of {PACKAGES} packages delivered.",
                p + 1,
                self.truck + 1,
                self.delivered()
            ),
            1.0,
        )
    }

    fn describe(&self, p: usize) -> String {
        match self.packages[p] {
            Place::At(l) => format!("it is at l{}", l + 1),
            Place::In(a) => format!("it is in area a{} of truck1", a + 1),
            Place::Delivered(l) => format!("it was delivered at l{}", l + 1),
        }
    }

    /// A description of the state, for observations.
    pub fn state_text(&self) -> String {
        let areas: Vec<String> = (0..AREAS)
            .map(|a| match self.areas[a] {
                None => format!("a{} free", a + 1),
                Some(p) => format!("a{} holds package{}", a + 1, p + 1),
            })
            .collect();
        format!("truck1 is at l{}; {}.", self.truck + 1, areas.join(", "))
    }
}

impl Environment for Trucks {
    fn name(&self) -> String {
        "trucks".into()
    }

    fn reset(&mut self, _seed: u64) -> Result<String, EnvError> {
        *self = Trucks::new();
        Ok(format!("{} All packages are at l1.", self.state_text()))
    }

    fn step(&mut self, action: &str) -> Result<Outcome, EnvError> {
        let parsed = parse_action(action);
        let labels = self.labels(parsed.as_ref());
        let (observation, reward) = match &parsed {
            _ if self.done => ("The episode is over.".to_string(), 0.0),
            None => (
                format!(
                    "Cannot understand the action `{}`. Nothing changed. Allowed actions: LOAD packageN into area aM at location lK; UNLOAD packageN from area aM at location lK; DRIVE truck1 from lK to lJ; DELIVER packageN at location lK; WAIT; DONE.",
                    action.trim()
                ),
                0.0,
            ),
            Some(a) => self.execute(a),
        };
        Ok(Outcome {
            observation,
            reward,
            done: self.done,
            labels: Some(labels),
        })
    }

    fn instructions(&self) -> String {
        "The Trucks domain is a logistics domain: a truck moves packages between locations. \
There are four actions: LOAD a package into an area of the truck, UNLOAD a package from a truck \
area (it is then at the truck's location), DRIVE the truck from one location to another, and \
DELIVER a package that was unloaded at its destination.\n\
Objects: truck truck1; packages package1, package2, package3, package4, package5; truck areas \
a1, a2, a3; locations l1, l2, l3, all connected to each other.\n\
State: truck1 is at l2; a1, a2 and a3 are free; a1 is closer to the exit than a2 and a3, a2 is \
closer than a3; all packages are at l1. An occupied area cannot be loaded, and a package can only \
be loaded into or unloaded from an area if every area closer to the exit is free.\n\
Actions are written like: LOAD package1 into area a1 at location l1 | UNLOAD package1 from area \
a1 at location l2 | DRIVE truck1 from l2 to l1 | DELIVER package1 at location l2 | DONE.\n"
            .to_string()
    }

    fn task(&self) -> String {
        let goals: Vec<String> = (0..PACKAGES)
            .map(|p| {
                format!(
                    "package{} must be delivered at destination l{}.",
                    p + 1,
                    self.goals[p] + 1
                )
            })
            .collect();
        format!(
            "You can only execute one action at each step. Example: $ACTION: LOAD package1 into area a1 at location l1$.\nYour goals are:\n{}\nEach package must be loaded into the truck, unloaded at its destination, and then delivered with the DELIVER action. When all of the packages are delivered, output DONE as the action.\n",
            goals.join("\n")
        )
    }

    fn noop(&self) -> String {
        "WAIT".into()
    }

    fn state_labels(&self) -> Vec<(String, bool)> {
        (0..AREAS)
            .map(|a| (format!("free(a{})", a + 1), self.areas[a].is_none()))
            .collect()
    }

    fn try_clone(&self) -> Option<Box<dyn Environment>> {
        Some(Box::new(self.clone()))
    }
}

/// `Err` with why when the action names a location `at` other than the truck's.
fn location_ok(at: &Option<usize>, truck: usize) -> Result<(), String> {
    match at {
        Some(l) if *l != truck => Err(format!("truck1 is at l{}, not at l{}", truck + 1, l + 1)),
        _ => Ok(()),
    }
}

/// The observation of an action that could not be executed (no reward).
fn cannot(what: &str, why: String) -> (String, f64) {
    (format!("Cannot {what}: {why}. Nothing changed."), 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(env: &mut Trucks, a: &str) -> Outcome {
        env.step(a).unwrap()
    }

    #[test]
    fn parses_the_papers_wording_and_variants() {
        assert_eq!(
            parse_action("$ACTION: LOAD package1 into area a1 at location l1$"),
            Some(Action::Load {
                pkg: Some(0),
                area: Some(0),
                at: Some(0)
            })
        );
        assert_eq!(
            parse_action("DRIVE truck1 from l3 to-l1"),
            Some(Action::Drive { to: Some(0) })
        );
        // package10 is not package1.
        assert_eq!(
            parse_action("deliver package10 at l2"),
            Some(Action::Deliver {
                pkg: Some(9),
                at: Some(1)
            })
        );
        assert_eq!(parse_action("I think I will go now"), None);
    }

    #[test]
    fn a_compliant_plan_delivers_everything() {
        let mut env = Trucks::new();
        env.reset(0).unwrap();
        let mut reward = 0.0;
        for p in [3, 2, 1, 5, 4] {
            for a in [
                "DRIVE truck1 from l2 to l1".to_string(),
                format!("LOAD package{p} into area a1 at location l1"),
                "DRIVE truck1 from l1 to l2".into(),
                format!("UNLOAD package{p} from area a1 at location l2"),
                format!("DELIVER package{p} at location l2"),
            ] {
                let o = step(&mut env, &a);
                assert!(
                    !o.observation.starts_with("Cannot"),
                    "{a}: {}",
                    o.observation
                );
                reward += o.reward;
            }
        }
        assert_eq!(reward, 5.0);
        assert!(env.is_done());
    }

    #[test]
    fn preconditions_and_labels() {
        let mut env = Trucks::new();
        step(&mut env, "DRIVE truck1 from l2 to l1");
        let o = step(&mut env, "LOAD package1 into area a2 at location l1");
        assert_eq!(
            o.labels.unwrap(),
            [
                "free(a1)",
                "free(a2)",
                "free(a3)",
                "load",
                "load_into(a2)",
                "load_pkg(package1)"
            ]
        );
        // a2 is occupied, a1 free: loading a1 works, then a3 is blocked by a1 and a2.
        let o = step(&mut env, "LOAD package2 into area a3 at location l1");
        assert!(
            o.observation.contains("occupied by package1"),
            "{}",
            o.observation
        );
        assert_eq!(env.package(1), Place::At(0));
        let o = step(&mut env, "LOAD package1 into area a1");
        assert!(o.observation.contains("not at l1"), "{}", o.observation);
        // Unparsable: an observation, state labels only.
        let o = step(&mut env, "hmm");
        assert!(o.observation.starts_with("Cannot understand"));
        assert_eq!(o.labels.unwrap(), ["free(a1)", "free(a3)"]);
        // Delivering where the truck is not.
        let o = step(&mut env, "DELIVER package1 at location l2");
        assert!(o.observation.starts_with("Cannot"), "{}", o.observation);
        assert_eq!(o.reward, 0.0);
    }
}
