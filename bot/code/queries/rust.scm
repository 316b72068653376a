; Rust definitions and references for codecite's symbol table.
; One pattern per line; lines starting with ';' are comments. Captures are
; described in bot/code/queries/__init__.py.

; Definitions: the node types of the chunk rules' tables (`kinds`, `wrappers`).
[(function_item) (struct_item) (union_item) (enum_item) (trait_item) (impl_item) (mod_item) (macro_definition)] @def
; Constants and statics (`bot.symbols.declarations`).
[(const_item) (static_item)] @def

; References: calls (also generic and path calls), macros, every type name,
; field accesses and struct-literal fields, path segments (`std::fmt`,
; `Foo::new`), `use` lists.
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(call_expression function: (scoped_identifier name: (identifier) @call))
(call_expression function: (generic_function function: (identifier) @call))
(call_expression function: (generic_function function: (field_expression field: (field_identifier) @call)))
(call_expression function: (generic_function function: (scoped_identifier name: (identifier) @call)))
(macro_invocation macro: (identifier) @call)
(macro_invocation macro: (scoped_identifier name: (identifier) @call))
(type_identifier) @ref
(field_expression field: (field_identifier) @ref)
(field_initializer field: (field_identifier) @ref)
(scoped_identifier path: (identifier) @ref)
(scoped_identifier name: (identifier) @ref)
(scoped_type_identifier path: (identifier) @ref)
(scoped_use_list path: (identifier) @ref)
(use_list (identifier) @ref)
(use_declaration argument: (identifier) @ref)
(use_as_clause path: (identifier) @ref)

; `use` declarations (imports; `pub use` re-exports too), type aliases, declarations whose
; type the code states (parameters, `let`, struct fields: `bot.symbols.bindings`).
(use_declaration) @import
[(use_declaration) (type_item)] @export
[(parameter) (let_declaration) (field_declaration)] @bind
