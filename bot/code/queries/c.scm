; C definitions and references for codecite's symbol table.
; One pattern per line; lines starting with ';' are comments. Captures are
; described in bot/code/queries/__init__.py.

; Definitions: the node types of the chunk rules' tables (`kinds`, `wrappers`),
; then shapes their `special` hook accepts; the rules have the last word, so
; a pattern here may only ever match more.
[(function_definition) (struct_specifier) (union_specifier) (enum_specifier)] @def
(type_definition type: [(struct_specifier body: (_)) (union_specifier body: (_)) (enum_specifier body: (_))]) @def
(declaration type: [(struct_specifier body: (_)) (union_specifier body: (_)) (enum_specifier body: (_))]) @def
(field_declaration type: [(struct_specifier body: (_)) (union_specifier body: (_)) (enum_specifier body: (_))]) @def

; References: calls, every type name, field accesses, designated initialisers.
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(type_identifier) @ref
(field_expression field: (field_identifier) @ref)
(field_designator (field_identifier) @ref)
