//! Grammars that constrain the embedded model's answers: a JSON schema made a GBNF grammar
//! (llama.cpp's grammar format), so that a model answering a labeling request can write only
//! the keys, types and list lengths of the labeler's schema.
//!
//! The translation follows the conventions of llama.cpp's `json-schema-to-grammar` (its rule
//! names and primitive rules): the root object is rule `root`; a property `take` of the root has
//! rule `take` for its value and `take-kv` for `"take": value`; an array's items are rule
//! `NAME-item` unless they are a primitive (`string`, `boolean`, ...), which has its own rule;
//! names are the path's characters other than letters, digits and `-` made `-`, with a number
//! appended when a name is taken by another rule. Objects list their required properties in the
//! order of `required`, then the optional ones by name, each `("," space kv)?`. Unlike
//! llama.cpp, an object without `additionalProperties` admits no other key (the labeler's
//! schemas say `false`).
//!
//! Supported keywords: `type` (`object`, `array`, `string`, `boolean`, `number`, `integer`,
//! `null`), `properties`, `required`, `additionalProperties: false`, `items`, `minItems`,
//! `maxItems`, `maxLength` (a string's), `enum` and `const` of strings, booleans and null. Anything else (`$ref`, `anyOf`,
//! a list of types, `pattern`, ...) is a [`GrammarError`] naming where it is.

use serde_json::{Map, Value};
use trac_llm::model::ResponseFormat;

/// A GBNF grammar for any JSON object (the `json_object` answer format), after llama.cpp's
/// `grammars/json.gbnf`.
pub const JSON_OBJECT_GBNF: &str = r#"
root   ::= ws object ws
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9]{1,15})? ws
ws     ::= | " " | "\n" [ \t]{0,20}
"#;

/// Why a JSON schema cannot be made a grammar. `path` is where in the schema, as a JSON
/// pointer (`/properties/take/items`; empty for the root).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrammarError {
    /// A keyword or type this translation does not support.
    #[error("JSON schema at `{path}`: `{keyword}` is not supported in a grammar")]
    Unsupported {
        /// Where.
        path: String,
        /// The keyword (or `type: X`).
        keyword: String,
    },
    /// Not a schema: not an object, or without `type`, `enum` or `const`.
    #[error("JSON schema at `{path}`: {what}")]
    Malformed {
        /// Where.
        path: String,
        /// What is wrong.
        what: String,
    },
}

/// The longest string (in characters) the embedded model may write in a schema-constrained
/// answer, where the schema gives no `maxLength`: a label value is a few words, and a small
/// model otherwise runs on inside a string to its token limit (`"1.1.1.1.1...`).
pub const MAX_STRING_CHARS: u64 = 64;

/// The grammar a request's answer format asks for: none for free text, any JSON object for
/// `json_object` ([`JSON_OBJECT_GBNF`]), the schema's grammar for either schema style, its
/// strings at most [`MAX_STRING_CHARS`] long ([`json_schema_to_gbnf_bounded`]).
///
/// Errors: the schema cannot be made a grammar.
pub fn grammar_for(format: &ResponseFormat) -> Result<Option<String>, GrammarError> {
    match format {
        ResponseFormat::Text => Ok(None),
        ResponseFormat::JsonObject => Ok(Some(JSON_OBJECT_GBNF.to_string())),
        ResponseFormat::JsonSchema(s) | ResponseFormat::JsonObjectSchema(s) => {
            json_schema_to_gbnf_bounded(s, Some(MAX_STRING_CHARS)).map(Some)
        }
    }
}

/// The GBNF grammar of the JSON values `schema` admits (see the [module docs](self)): one rule
/// per line, `root` first, then the others in the order they were made. Strings are as long as
/// their `maxLength` allows (unbounded without).
///
/// Errors: a keyword or type outside the supported subset, a schema that is not one.
pub fn json_schema_to_gbnf(schema: &Value) -> Result<String, GrammarError> {
    json_schema_to_gbnf_bounded(schema, None)
}

/// [`json_schema_to_gbnf`], a string without `maxLength` at most `max_string` characters long
/// (`char{0,N}`).
///
/// Errors: as [`json_schema_to_gbnf`].
pub fn json_schema_to_gbnf_bounded(
    schema: &Value,
    max_string: Option<u64>,
) -> Result<String, GrammarError> {
    let mut g = Grammar {
        rules: Vec::new(),
        max_string,
    };
    let root = g.visit(schema, "", "")?;
    if root != "root" {
        g.rules.insert(0, ("root".to_string(), root));
    } else if let Some(i) = g.rules.iter().position(|(n, _)| n == "root") {
        let r = g.rules.remove(i);
        g.rules.insert(0, r);
    }
    Ok(g.rules
        .iter()
        .map(|(n, b)| format!("{n} ::= {b}\n"))
        .collect())
}

const SPACE: &str = r#"| " " | "\n" [ \t]{0,20}"#;
const CHAR: &str = r#"[^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})"#;

struct Grammar {
    rules: Vec<(String, String)>,
    /// The longest string where the schema gives no `maxLength`.
    max_string: Option<u64>,
}

/// `s` as a GBNF string literal.
fn literal(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A rule name from a path: characters other than ASCII letters, digits and `-` become `-`
/// (runs of them one `-`).
fn rule_name(path: &str) -> String {
    let mut out = String::new();
    for c in path.chars() {
        if c.is_ascii_alphanumeric() || c == '-' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    if out.is_empty() {
        "root".into()
    } else {
        out
    }
}

impl Grammar {
    /// Adds rule `name ::= body` (a free variant of `name` if taken by another body); its name.
    fn add(&mut self, name: &str, body: String) -> String {
        let base = rule_name(name);
        let mut n = base.clone();
        let mut i = 1;
        loop {
            match self.rules.iter().find(|(x, _)| *x == n) {
                None => {
                    self.rules.push((n.clone(), body));
                    return n;
                }
                Some((_, b)) if *b == body => return n,
                Some(_) => {
                    n = format!("{base}{i}");
                    i += 1;
                }
            }
        }
    }

    /// The rule of a primitive type; `max_len`: a string's `maxLength`.
    fn primitive(&mut self, kind: &str, max_len: Option<u64>) -> String {
        self.add("space", SPACE.into());
        match kind {
            "string" => {
                let c = self.add("char", CHAR.into());
                let rep = match max_len.or(self.max_string) {
                    Some(n) => format!("{{0,{n}}}"),
                    None => "*".into(),
                };
                self.add("string", format!("\"\\\"\" {c}{rep} \"\\\"\" space"))
            }
            "boolean" => self.add("boolean", r#"("true" | "false") space"#.into()),
            "null" => self.add("null", r#""null" space"#.into()),
            "integer" => self.add("integer", r#"("-"? ([0-9] | [1-9] [0-9]{0,15})) space"#.into()),
            _ => self.add(
                "number",
                r#"("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9]{1,15})? space"#
                    .into(),
            ),
        }
    }

    /// The rule (name) of `schema` at `path` (a JSON pointer, for errors); `name`: its rule
    /// name (empty for the root).
    fn visit(&mut self, schema: &Value, name: &str, path: &str) -> Result<String, GrammarError> {
        let Value::Object(s) = schema else {
            return Err(GrammarError::Malformed {
                path: path.into(),
                what: "not an object".into(),
            });
        };
        for k in s.keys() {
            let known = [
                "type",
                "properties",
                "required",
                "additionalProperties",
                "items",
                "minItems",
                "maxItems",
                "maxLength",
                "enum",
                "const",
                "description",
                "title",
            ];
            if !known.contains(&k.as_str()) {
                return Err(GrammarError::Unsupported {
                    path: path.into(),
                    keyword: k.clone(),
                });
            }
        }
        let own = if name.is_empty() { "root" } else { name };
        if let Some(c) = s.get("const") {
            let body = self.literals(std::slice::from_ref(c), path)?;
            return Ok(self.add(own, body));
        }
        if let Some(e) = s.get("enum") {
            let Value::Array(items) = e else {
                return Err(GrammarError::Malformed {
                    path: format!("{path}/enum"),
                    what: "not a list".into(),
                });
            };
            let body = self.literals(items, path)?;
            return Ok(self.add(own, body));
        }
        match s.get("type") {
            Some(Value::String(t)) => match t.as_str() {
                "object" => self.object(s, name, path),
                "array" => self.array(s, name, path),
                "string" | "boolean" | "null" | "integer" | "number" => {
                    let max_len = match s.get("maxLength") {
                        None => None,
                        Some(v) => Some(v.as_u64().ok_or_else(|| GrammarError::Malformed {
                            path: format!("{path}/maxLength"),
                            what: "not a count".into(),
                        })?),
                    };
                    Ok(self.primitive(t, max_len))
                }
                other => Err(GrammarError::Unsupported {
                    path: path.into(),
                    keyword: format!("type: {other}"),
                }),
            },
            Some(_) => Err(GrammarError::Unsupported {
                path: path.into(),
                keyword: "type (not one name)".into(),
            }),
            None => Err(GrammarError::Malformed {
                path: path.into(),
                what: "no `type`, `enum` or `const`".into(),
            }),
        }
    }

    /// `v1 | v2 | ...` of JSON literals, each followed by `space`.
    fn literals(&mut self, items: &[Value], path: &str) -> Result<String, GrammarError> {
        self.add("space", SPACE.into());
        let mut alts = Vec::new();
        for v in items {
            if matches!(v, Value::Array(_) | Value::Object(_) | Value::Number(_)) {
                return Err(GrammarError::Unsupported {
                    path: path.into(),
                    keyword: format!("enum or const value {v}"),
                });
            }
            alts.push(format!("{} space", literal(&v.to_string())));
        }
        if alts.is_empty() {
            return Err(GrammarError::Malformed {
                path: path.into(),
                what: "an empty enum".into(),
            });
        }
        Ok(if alts.len() == 1 {
            alts.remove(0)
        } else {
            format!("({})", alts.join(" | "))
        })
    }

    fn object(
        &mut self,
        s: &Map<String, Value>,
        name: &str,
        path: &str,
    ) -> Result<String, GrammarError> {
        match s.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => {
                return Err(GrammarError::Unsupported {
                    path: path.into(),
                    keyword: "additionalProperties other than false".into(),
                })
            }
        }
        let empty = Map::new();
        let props = match s.get("properties") {
            None => &empty,
            Some(Value::Object(p)) => p,
            Some(_) => {
                return Err(GrammarError::Malformed {
                    path: format!("{path}/properties"),
                    what: "not an object".into(),
                })
            }
        };
        let required: Vec<&str> = match s.get("required") {
            None => Vec::new(),
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
            Some(_) => {
                return Err(GrammarError::Malformed {
                    path: format!("{path}/required"),
                    what: "not a list".into(),
                })
            }
        };
        let prefix = if name.is_empty() {
            String::new()
        } else {
            format!("{name}-")
        };
        let (mut req, mut opt) = (Vec::new(), Vec::new());
        let mut order: Vec<&str> = Vec::new();
        for k in &required {
            if !props.contains_key(*k) {
                return Err(GrammarError::Malformed {
                    path: format!("{path}/required"),
                    what: format!("`{k}` is required but not among the properties"),
                });
            }
            if !order.contains(k) {
                order.push(k);
            }
        }
        let mut optional: Vec<&str> = props
            .keys()
            .map(String::as_str)
            .filter(|k| !required.contains(k))
            .collect();
        optional.sort_unstable();
        order.extend(optional);
        for k in order {
            let v = &props[k];
            let pname = format!("{prefix}{k}");
            let value = self.visit(v, &pname, &format!("{path}/properties/{k}"))?;
            self.add("space", SPACE.into());
            let kv = self.add(
                &format!("{pname}-kv"),
                format!("{} space \":\" space {value}", literal(&format!("\"{k}\""))),
            );
            if required.contains(&k) {
                req.push(kv);
            } else {
                opt.push(kv);
            }
        }
        if req.is_empty() && !opt.is_empty() {
            return Err(GrammarError::Unsupported {
                path: path.into(),
                keyword: "an object with optional properties only".into(),
            });
        }
        self.add("space", SPACE.into());
        let mut body = String::from("\"{\" space");
        for (i, kv) in req.iter().enumerate() {
            if i > 0 {
                body.push_str(" \",\" space");
            }
            body.push(' ');
            body.push_str(kv);
        }
        for kv in &opt {
            body.push_str(&format!(" (\",\" space {kv})?"));
        }
        body.push_str(" \"}\" space");
        Ok(self.add(if name.is_empty() { "root" } else { name }, body))
    }

    fn array(
        &mut self,
        s: &Map<String, Value>,
        name: &str,
        path: &str,
    ) -> Result<String, GrammarError> {
        let count = |k: &str| -> Result<Option<u64>, GrammarError> {
            match s.get(k) {
                None => Ok(None),
                Some(v) => v.as_u64().map(Some).ok_or_else(|| GrammarError::Malformed {
                    path: format!("{path}/{k}"),
                    what: "not a count".into(),
                }),
            }
        };
        let (min, max) = (count("minItems")?.unwrap_or(0), count("maxItems")?);
        let item_name = if name.is_empty() {
            "item".to_string()
        } else {
            format!("{name}-item")
        };
        let item = match s.get("items") {
            Some(i) => self.visit(i, &item_name, &format!("{path}/items"))?,
            None => {
                return Err(GrammarError::Unsupported {
                    path: path.into(),
                    keyword: "an array without items".into(),
                })
            }
        };
        self.add("space", SPACE.into());
        let more = |lo: u64, hi: Option<u64>| -> String {
            let rep = match hi {
                None if lo == 0 => "*".to_string(),
                None => format!("{{{lo},}}"),
                Some(h) if h == lo => format!("{{{lo}}}"),
                Some(h) => format!("{{{lo},{h}}}"),
            };
            format!("(\",\" space {item}){rep}")
        };
        let inner = match (min, max) {
            (_, Some(0)) => String::new(),
            (0, Some(1)) => format!(" {item}?"),
            (0, hi) => format!(" ({item} {})?", more(0, hi.map(|h| h - 1))),
            (1, Some(1)) => format!(" {item}"),
            (lo, hi) => format!(" {item} {}", more(lo - 1, hi.map(|h| h - 1))),
        };
        if max.is_some_and(|h| h < min) {
            return Err(GrammarError::Malformed {
                path: path.into(),
                what: format!("maxItems {} below minItems {min}", max.unwrap_or(0)),
            });
        }
        Ok(self.add(
            if name.is_empty() { "root" } else { name },
            format!("\"[\" space{inner} \"]\" space"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The labeler's answer schema for `look` (plain), `take(item)` and `loads(pkg, area)`.
    #[test]
    fn the_labelers_schema_becomes_its_grammar() {
        let schema = json!({
            "type": "object",
            "properties": {
                "look": {"type": "boolean"},
                "take": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
                "loads": {"type": "array", "maxItems": 8,
                          "items": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2}},
            },
            "required": ["look", "take", "loads"],
            "additionalProperties": false,
        });
        let want = [
            r#"root ::= "{" space look-kv "," space take-kv "," space loads-kv "}" space"#,
            r#"space ::= | " " | "\n" [ \t]{0,20}"#,
            r#"boolean ::= ("true" | "false") space"#,
            r#"look-kv ::= "\"look\"" space ":" space boolean"#,
            r#"char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})"#,
            r#"string ::= "\"" char* "\"" space"#,
            r#"take ::= "[" space (string ("," space string){0,7})? "]" space"#,
            r#"take-kv ::= "\"take\"" space ":" space take"#,
            r#"loads-item ::= "[" space string ("," space string){1} "]" space"#,
            r#"loads ::= "[" space (loads-item ("," space loads-item){0,7})? "]" space"#,
            r#"loads-kv ::= "\"loads\"" space ":" space loads"#,
        ];
        let got = json_schema_to_gbnf(&schema).unwrap();
        assert_eq!(got.lines().collect::<Vec<_>>(), want, "{got}");
    }

    #[test]
    fn names_taken_get_a_number_and_optional_keys_follow_required_ones() {
        let schema = json!({
            "type": "object",
            "properties": {
                "string": {"type": "array", "items": {"type": "string"}},
                "mode": {"enum": ["a", "b"]},
                "n": {"type": "integer"},
            },
            "required": ["string"],
        });
        let got = json_schema_to_gbnf(&schema).unwrap();
        let want = [
            r#"root ::= "{" space string-kv ("," space mode-kv)? ("," space n-kv)? "}" space"#,
            r#"space ::= | " " | "\n" [ \t]{0,20}"#,
            r#"char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})"#,
            r#"string ::= "\"" char* "\"" space"#,
            r#"string1 ::= "[" space (string ("," space string)*)? "]" space"#,
            r#"string-kv ::= "\"string\"" space ":" space string1"#,
            r#"mode ::= ("\"a\"" space | "\"b\"" space)"#,
            r#"mode-kv ::= "\"mode\"" space ":" space mode"#,
            r#"integer ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) space"#,
            r#"n-kv ::= "\"n\"" space ":" space integer"#,
        ];
        assert_eq!(got.lines().collect::<Vec<_>>(), want, "{got}");
    }

    #[test]
    fn unsupported_schemas_are_errors_naming_where() {
        let e = json_schema_to_gbnf(&json!({"type": "object", "properties": {
            "x": {"anyOf": [{"type": "string"}]}}, "required": ["x"]}))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "JSON schema at `/properties/x`: `anyOf` is not supported in a grammar"
        );
        let e = json_schema_to_gbnf(&json!({"type": "array"})).unwrap_err();
        assert!(e.to_string().contains("an array without items"), "{e}");
        let e = json_schema_to_gbnf(&json!({"type": ["string", "null"]})).unwrap_err();
        assert!(matches!(e, GrammarError::Unsupported { .. }), "{e}");
        let e = json_schema_to_gbnf(&json!(3)).unwrap_err();
        assert_eq!(e.to_string(), "JSON schema at ``: not an object");
    }

    #[test]
    fn the_answer_format_chooses_the_grammar() {
        assert_eq!(grammar_for(&ResponseFormat::Text).unwrap(), None);
        assert_eq!(
            grammar_for(&ResponseFormat::JsonObject).unwrap().as_deref(),
            Some(JSON_OBJECT_GBNF)
        );
        let s = json!({"type": "object", "properties": {"look": {"type": "boolean"}},
                       "required": ["look"], "additionalProperties": false});
        let g = grammar_for(&ResponseFormat::JsonSchema(s.clone()))
            .unwrap()
            .unwrap();
        assert!(
            g.starts_with("root ::= \"{\" space look-kv \"}\" space\n"),
            "{g}"
        );
        // The embedded model's strings are bounded: a small model cannot run on inside one.
        let s2 = json!({"type": "object", "properties": {
            "take": {"type": "array", "items": {"type": "string"}},
            "name": {"type": "string", "maxLength": 5}},
            "required": ["take", "name"], "additionalProperties": false});
        let g2 = grammar_for(&ResponseFormat::JsonSchema(s2.clone()))
            .unwrap()
            .unwrap();
        assert!(
            g2.lines()
                .any(|l| l == r#"string ::= "\"" char{0,64} "\"" space"#),
            "{g2}"
        );
        assert!(
            g2.lines()
                .any(|l| l == r#"string1 ::= "\"" char{0,5} "\"" space"#),
            "{g2}"
        );
        let unbounded = json_schema_to_gbnf(&s2).unwrap();
        assert!(unbounded
            .lines()
            .any(|l| l == r#"string ::= "\"" char* "\"" space"#));
        assert_eq!(
            grammar_for(&ResponseFormat::JsonObjectSchema(s))
                .unwrap()
                .unwrap(),
            g
        );
    }
}
