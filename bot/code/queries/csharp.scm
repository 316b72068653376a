; C# definitions and references for codecite's symbol table.
; One pattern per line; lines starting with ';' are comments. Captures are
; described in bot/code/queries/__init__.py.

; Definitions: the node types of the chunk rules' tables (`kinds`, `wrappers`).
[(class_declaration) (record_declaration) (struct_declaration) (interface_declaration) (enum_declaration) (namespace_declaration) (method_declaration) (constructor_declaration) (destructor_declaration) (operator_declaration) (conversion_operator_declaration) (local_function_statement)] @def
; Properties, events, constants, delegates (`bot.symbols.declarations` decides).
[(property_declaration) (delegate_declaration) (event_field_declaration) (field_declaration)] @def

; References (one node type for every name): calls, `new`, member names,
; names in type positions (`type:`, `returns:`, generic arguments, base lists),
; qualified names in `using`, attributes, upper-case objects.
(invocation_expression function: (identifier) @call)
(invocation_expression function: (generic_name (identifier) @call))
(invocation_expression function: (member_access_expression name: (identifier) @call))
(invocation_expression function: (member_access_expression name: (generic_name (identifier) @call)))
(object_creation_expression type: (identifier) @call)
(object_creation_expression type: (generic_name (identifier) @call))
(member_access_expression name: (identifier) @ref)
(member_access_expression name: (generic_name (identifier) @ref))
(member_access_expression expression: (identifier) @object)
(_ type: (identifier) @ref)
(_ returns: (identifier) @ref)
(generic_name (identifier) @ref)
(type_argument_list (identifier) @ref)
(base_list (identifier) @ref)
(qualified_name (identifier) @ref)
(attribute name: (identifier) @ref)

; Base class and interfaces (`class A : B, IC`).
(base_list [(identifier) (qualified_name)] @base)
(base_list (generic_name (identifier) @base))
(base_list (primary_constructor_base_type type: [(identifier) (qualified_name)] @base))
