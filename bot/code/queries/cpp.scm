; C++ definitions and references for codecite's symbol table.
; One pattern per line; lines starting with ';' are comments. Captures are
; described in bot/code/queries/__init__.py.

; Definitions: the node types of the chunk rules' tables (`kinds`, `wrappers`),
; then shapes their `special` hook accepts; the rules have the last word, so
; a pattern here may only ever match more.
[(function_definition) (struct_specifier) (union_specifier) (enum_specifier) (class_specifier) (namespace_definition) (template_declaration)] @def
(type_definition type: [(struct_specifier body: (_)) (union_specifier body: (_)) (enum_specifier body: (_)) (class_specifier body: (_))]) @def
(declaration type: [(struct_specifier body: (_)) (union_specifier body: (_)) (enum_specifier body: (_)) (class_specifier body: (_))]) @def
(field_declaration type: [(struct_specifier body: (_)) (union_specifier body: (_)) (enum_specifier body: (_)) (class_specifier body: (_))]) @def

; References: C's, plus qualified and template calls, `new`, namespaces,
; qualified names, `using` declarations.
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(type_identifier) @ref
(field_expression field: (field_identifier) @ref)
(field_designator (field_identifier) @ref)
(call_expression function: (qualified_identifier name: (identifier) @call))
(call_expression function: (template_function name: (identifier) @call))
(call_expression function: (qualified_identifier name: (template_function name: (identifier) @call)))
(new_expression type: (type_identifier) @call)
(new_expression type: (qualified_identifier name: (type_identifier) @call))
(namespace_identifier) @ref
(qualified_identifier name: (identifier) @ref)
(using_declaration (identifier) @ref)

; Base classes (`class A : public B`).
(base_class_clause [(type_identifier) (qualified_identifier)] @base)
(base_class_clause (template_type name: [(type_identifier) (qualified_identifier)] @base))
