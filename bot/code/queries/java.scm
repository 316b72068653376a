; Java definitions and references for codecite's symbol table.
; One pattern per line; lines starting with ';' are comments. Captures are
; described in bot/code/queries/__init__.py.

; Definitions: the node types of the chunk rules' tables (`kinds`, `wrappers`).
[(class_declaration) (record_declaration) (interface_declaration) (annotation_type_declaration) (enum_declaration) (method_declaration) (constructor_declaration) (compact_constructor_declaration)] @def
; `static final` constants (`bot.symbols.declarations` decides).
(field_declaration) @def

; References: calls, `new`, every type name, field accesses, annotations,
; imports (scoped identifiers), method references, upper-case objects.
(method_invocation name: (identifier) @call)
(object_creation_expression type: (type_identifier) @call)
(object_creation_expression type: (generic_type (type_identifier) @call))
(object_creation_expression type: (scoped_type_identifier (type_identifier) @call .))
(object_creation_expression type: (generic_type (scoped_type_identifier (type_identifier) @call .)))
(type_identifier) @ref
(field_access field: (identifier) @ref)
(field_access object: (identifier) @object)
(method_invocation object: (identifier) @object)
(marker_annotation name: (identifier) @ref)
(annotation name: (identifier) @ref)
(scoped_identifier name: (identifier) @ref)
(method_reference (identifier) @ref .)
(method_reference . (identifier) @object)

; Superclass and interfaces (`extends`, `implements`, an interface's `extends`).
(superclass [(type_identifier) (scoped_type_identifier)] @base)
(superclass (generic_type [(type_identifier) (scoped_type_identifier)] @base))
(super_interfaces (type_list [(type_identifier) (scoped_type_identifier)] @base))
(super_interfaces (type_list (generic_type [(type_identifier) (scoped_type_identifier)] @base)))
(extends_interfaces (type_list [(type_identifier) (scoped_type_identifier)] @base))
(extends_interfaces (type_list (generic_type [(type_identifier) (scoped_type_identifier)] @base)))

; Imports and declarations whose type the code states (parameters, locals, fields).
(import_declaration) @import
[(formal_parameter) (local_variable_declaration) (field_declaration)] @bind
