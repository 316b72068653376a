; PHP definitions and references for codecite's symbol table.
; One pattern per line; lines starting with ';' are comments. Captures are
; described in bot/code/queries/__init__.py.

; Definitions: the node types of the chunk rules' tables (`kinds`, `wrappers`).
[(namespace_definition) (class_declaration) (interface_declaration) (trait_declaration) (enum_declaration) (function_definition) (method_declaration)] @def
; Class constants (`bot.symbols.declarations`).
(const_declaration (const_element) @def)

; References: calls, `new`, and every `name` node: variables are a node type
; of their own (`$x`).
(function_call_expression function: (name) @call)
(function_call_expression function: (qualified_name (name) @call))
(member_call_expression name: (name) @call)
(nullsafe_member_call_expression name: (name) @call)
(scoped_call_expression name: (name) @call)
(object_creation_expression (name) @call)
(object_creation_expression (qualified_name (name) @call))
(name) @ref

; Parent class and interfaces (`extends`, `implements`).
(base_clause [(name) (qualified_name)] @base)
(class_interface_clause [(name) (qualified_name)] @base)
