; Go definitions and references for codecite's symbol table.
; One pattern per line; lines starting with ';' are comments. Captures are
; described in bot/code/queries/__init__.py.

; Definitions: the node types of the chunk rules' tables (`kinds`, `wrappers`),
; then shapes their `special` hook accepts; the rules have the last word, so
; a pattern here may only ever match more.
[(function_declaration) (method_declaration)] @def
(type_declaration) @def
(type_spec) @def
; Module-level constants and variables (`bot.symbols.declarations`).
(source_file (const_declaration (const_spec) @def))
(source_file (var_declaration (var_spec) @def))
(source_file (var_declaration (var_spec_list (var_spec) @def)))

; References: calls, every type, field selector and package name, the operand
; of a selector (a package in `log.Println`; Go code names a package no other
; way, so a variable operand, `req.Header`, is kept too), keys of composite
; literals.
(call_expression function: (identifier) @call)
(call_expression function: (selector_expression field: (field_identifier) @call))
(selector_expression field: (field_identifier) @ref)
(selector_expression operand: (identifier) @ref)
(type_identifier) @ref
(package_identifier) @ref
(keyed_element . (literal_element (identifier) @ref))

; Embedded types (a struct's or an interface's promoted members).
(field_declaration !name type: [(type_identifier) (qualified_type)] @base)
(field_declaration !name type: (pointer_type [(type_identifier) (qualified_type)] @base))
(interface_type (type_elem [(type_identifier) (qualified_type)] @base))

; Imports, declarations whose type the code states (parameters and receivers, `var`,
; `x := NewX()` / `&X{}`, struct fields: `bot.symbols.bindings`), package-level `var` and
; type aliases (`bot.symbols.exports`).
(import_spec) @import
(package_clause (package_identifier) @package)
[(parameter_declaration) (var_spec) (short_var_declaration) (field_declaration)] @bind
(source_file (var_declaration) @export)
(type_alias) @export
