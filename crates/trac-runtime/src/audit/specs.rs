//! The policy of an audit of several specs at once, shared by every front end: the labeling is
//! one (a label computed by one spec's rule holds for every spec's properties), so a proposition
//! declared by two specs with different rules is an error; a property id declared by several
//! specs is namespaced by its spec's name (`R1` of the spec named `textworld` becomes
//! `textworld/R1`), unless the specs also share their name.

use std::collections::BTreeMap;
use std::fmt;
use trac_spec::spec::CheckedSpec;

/// Why a set of specs cannot be audited together.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecSetError {
    /// Two specs declare a proposition with different rules or parameters.
    #[error(
        "proposition `{name}` is declared with different rules at {first} and at {second}: the labeling is shared by every spec, so one spec's properties would be decided by the other's rule; rename one of them"
    )]
    ConflictingProposition {
        /// The proposition.
        name: String,
        /// Where the first spec declares it (`FILE:LINE:COLUMN`, or ``spec `NAME` ``).
        first: String,
        /// Where the second does.
        second: String,
    },
    /// Two specs of the same name declare the same property id: namespacing cannot tell them
    /// apart.
    #[error(
        "property id `{id}` is declared by {first} and {second}, whose specs are both named `{spec}`: rename a spec (its `name`) or a property"
    )]
    DuplicateId {
        /// The id.
        id: String,
        /// The file of the first spec.
        first: String,
        /// The file of the second.
        second: String,
        /// Their common name.
        spec: String,
    },
}

/// A property id declared by several specs, now reported under new names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Renamed {
    /// The id as declared.
    pub id: String,
    /// The new ids with their files: `` `textworld/R1` (FILE) ``.
    pub names: Vec<String>,
}

impl fmt::Display for Renamed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "property id `{}` is declared by several specs: reported as {}",
            self.id,
            self.names.join(", ")
        )
    }
}

/// Checks that `specs` can be audited together and namespaces their shared property ids.
/// `files[i]` names the file of `specs[i]`; a spec without one (`None`, or past the end of
/// `files`: the CLI's `--formula` properties) keeps its ids. Returns the renamings, in id order.
///
/// O(propositions²) for the conflict check.
///
/// # Errors
/// Every conflicting proposition, else every id that namespacing cannot tell apart.
pub fn combine(
    specs: &mut [CheckedSpec],
    files: &[Option<String>],
) -> Result<Vec<Renamed>, Vec<SpecSetError>> {
    let conflicts = conflicting_propositions(specs);
    if !conflicts.is_empty() {
        return Err(conflicts);
    }
    namespace_ids(specs, files)
}

/// The propositions that several specs declare with different rules or parameters, naming both
/// declarations (`FILE:LINE:COLUMN`). The same declaration repeated (a shared vocabulary) is
/// fine.
fn conflicting_propositions(specs: &[CheckedSpec]) -> Vec<SpecSetError> {
    let at = |c: &CheckedSpec, i: usize| match c.spec.proposition_position(i) {
        Some((file, line, col)) => format!("{file}:{line}:{col}"),
        None => format!("spec `{}`", c.spec.name),
    };
    let mut errors = Vec::new();
    for (a, ca) in specs.iter().enumerate() {
        for (i, pa) in ca.spec.propositions.iter().enumerate() {
            for cb in &specs[a + 1..] {
                let Some(j) = cb.spec.propositions.iter().position(|p| p.name == pa.name) else {
                    continue;
                };
                let pb = &cb.spec.propositions[j];
                // Equal rules under different case sensitivity match different texts.
                let case = pa.rule.is_some() && ca.spec.case_sensitive != cb.spec.case_sensitive;
                if pa.rule != pb.rule || pa.param != pb.param || case {
                    errors.push(SpecSetError::ConflictingProposition {
                        name: pa.name.clone(),
                        first: at(ca, i),
                        second: at(cb, j),
                    });
                }
            }
        }
    }
    errors
}

/// Namespaces the property ids that several specs declare (see [`combine`]).
fn namespace_ids(
    specs: &mut [CheckedSpec],
    files: &[Option<String>],
) -> Result<Vec<Renamed>, Vec<SpecSetError>> {
    let mut owners: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, c) in specs.iter().enumerate() {
        for p in &c.properties {
            owners.entry(p.decl.id.clone()).or_default().push(i);
        }
    }
    let file = |i: usize| {
        files
            .get(i)
            .and_then(Option::clone)
            .unwrap_or_else(|| "the command line".to_string())
    };
    let mut errors = Vec::new();
    for (id, who) in owners.iter().filter(|(_, w)| w.len() > 1) {
        for (k, &a) in who.iter().enumerate() {
            for &b in &who[k + 1..] {
                if specs[a].spec.name == specs[b].spec.name {
                    errors.push(SpecSetError::DuplicateId {
                        id: id.clone(),
                        first: file(a),
                        second: file(b),
                        spec: specs[a].spec.name.clone(),
                    });
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut renamed = Vec::new();
    for (id, who) in owners.iter().filter(|(_, w)| w.len() > 1) {
        let mut names = Vec::new();
        for &i in who
            .iter()
            .filter(|&&i| files.get(i).is_some_and(Option::is_some))
        {
            let new = format!("{}/{id}", specs[i].spec.name);
            for p in specs[i].properties.iter_mut().filter(|p| p.decl.id == *id) {
                p.decl.id = new.clone();
            }
            names.push(format!("`{new}` ({})", file(i)));
        }
        renamed.push(Renamed {
            id: id.clone(),
            names,
        });
    }
    Ok(renamed)
}
