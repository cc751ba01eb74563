//! The syntax of `trac_monitor!` input (see the crate docs for the grammar).

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{braced, parenthesized, Attribute, Ident, LitStr, Token, Visibility};

/// The whole macro input.
pub struct MonitorInput {
    /// Attributes of the struct (doc comments, `#[trac(crate = ...)]`, others passed through).
    pub attrs: Vec<Attribute>,
    /// The struct's visibility.
    pub vis: Visibility,
    /// The struct's name.
    pub ident: Ident,
    /// Inline declarations or a spec file.
    pub body: Body,
}

/// Where the propositions and properties come from.
pub enum Body {
    /// `{ props { .. } id: "formula", .. }`
    Inline(Inline),
    /// `from "path/to/spec.ron"`
    File(LitStr),
}

/// The inline declarations.
pub struct Inline {
    /// The `props { .. }` block (empty when missing).
    pub props: Vec<PropInput>,
    /// Span of the `props` keyword (or of the braces when missing).
    pub props_span: Span,
    /// The properties.
    pub properties: Vec<PropertyInput>,
}

/// `name: "description"` or `name(param): "description"` in `props { .. }`.
pub struct PropInput {
    /// Doc comments and other attributes.
    pub attrs: Vec<Attribute>,
    /// The proposition's name (also its label and its field in the valuation).
    pub ident: Ident,
    /// The parameter, for a parametric proposition.
    pub param: Option<Ident>,
    /// Plain-English description.
    pub description: LitStr,
}

/// `#[attrs] id: "formula"`.
pub struct PropertyInput {
    /// Doc comments and `#[ltlf]`, `#[reset_on_satisfaction]`.
    pub attrs: Vec<Attribute>,
    /// The property's id.
    pub ident: Ident,
    /// The formula, `[forall x:] φ` in Spot syntax.
    pub formula: LitStr,
}

impl Parse for MonitorInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        input.parse::<Token![struct]>()?;
        let ident: Ident = input.parse()?;
        let body = if input.peek(syn::token::Brace) {
            let content;
            let brace = braced!(content in input);
            Body::Inline(parse_inline(&content, brace.span.join())?)
        } else {
            let from: Ident = input.parse()?;
            if from != "from" {
                return Err(syn::Error::new(
                    from.span(),
                    "expected `{ props { .. } id: \"formula\", .. }` or `from \"spec.ron\"`",
                ));
            }
            Body::File(input.parse()?)
        };
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
        }
        if !input.is_empty() {
            return Err(input.error("unexpected input after the monitor declaration"));
        }
        Ok(MonitorInput {
            attrs,
            vis,
            ident,
            body,
        })
    }
}

fn parse_inline(input: ParseStream<'_>, brace: Span) -> syn::Result<Inline> {
    let mut props = Vec::new();
    let mut props_span = brace;
    let mut properties = Vec::new();
    let mut seen_props = false;
    while !input.is_empty() {
        let attrs = input.call(Attribute::parse_outer)?;
        let ident: Ident = input.parse()?;
        if ident == "props" && input.peek(syn::token::Brace) {
            if seen_props {
                return Err(syn::Error::new(
                    ident.span(),
                    "a second `props { .. }` block",
                ));
            }
            if let Some(a) = attrs.first() {
                return Err(syn::Error::new_spanned(
                    a,
                    "attributes are not allowed on the `props` block",
                ));
            }
            seen_props = true;
            props_span = ident.span();
            let content;
            braced!(content in input);
            let list: Punctuated<PropInput, Token![,]> =
                content.parse_terminated(PropInput::parse, Token![,])?;
            props = list.into_iter().collect();
            if input.peek(Token![,]) {
                input.parse::<Token![,]>()?;
            }
            continue;
        }
        input.parse::<Token![:]>()?;
        let formula: LitStr = input.parse()?;
        properties.push(PropertyInput {
            attrs,
            ident,
            formula,
        });
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(Inline {
        props,
        props_span,
        properties,
    })
}

impl Parse for PropInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let ident: Ident = input.parse()?;
        let param = if input.peek(syn::token::Paren) {
            let content;
            parenthesized!(content in input);
            let p: Ident = content.parse()?;
            if !content.is_empty() {
                return Err(content.error("expected one parameter: `name(param)`"));
            }
            Some(p)
        } else {
            None
        };
        input.parse::<Token![:]>()?;
        let description: LitStr = input.parse()?;
        Ok(PropInput {
            attrs,
            ident,
            param,
            description,
        })
    }
}
