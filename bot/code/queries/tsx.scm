; TSX definitions and references for codecite's symbol table.
; One pattern per line; lines starting with ';' are comments. Captures are
; described in bot/code/queries/__init__.py.

; Definitions: the node types of the chunk rules' tables (`kinds`, `wrappers`),
; then shapes their `special` hook accepts; the rules have the last word, so
; a pattern here may only ever match more.
[(function_declaration) (generator_function_declaration) (class_declaration) (abstract_class_declaration) (method_definition) (interface_declaration) (enum_declaration) (internal_module) (module) (ambient_declaration)] @def
(export_statement) @def
(lexical_declaration (variable_declarator value: [(arrow_function) (function_expression) (generator_function) (class)])) @def
(variable_declaration (variable_declarator value: [(arrow_function) (function_expression) (generator_function) (class)])) @def
(public_field_definition value: [(arrow_function) (function_expression) (generator_function) (class)]) @def
(expression_statement (assignment_expression right: [(arrow_function) (function_expression) (generator_function) (class)])) @def
; Definitions no chunk is made of (`bot.symbols.declarations`): type aliases, objects a
; name holds and their function members, module-level constants.
(type_alias_declaration) @def
(pair value: [(arrow_function) (function_expression) (generator_function) (object)]) @def
(program [(lexical_declaration) (variable_declaration)] @def)
(lexical_declaration (variable_declarator value: (object))) @def
(variable_declaration (variable_declarator value: (object))) @def
(lexical_declaration (variable_declarator value: [(as_expression) (satisfies_expression)])) @def
(expression_statement (assignment_expression right: (object))) @def

; References: TypeScript's, plus JSX elements (called).
(call_expression function: (identifier) @call)
(call_expression function: (member_expression property: (property_identifier) @call))
(call_expression function: (member_expression property: (private_property_identifier) @call))
(new_expression constructor: (identifier) @call)
(new_expression constructor: (member_expression property: (property_identifier) @call))
(member_expression property: (property_identifier) @ref)
(member_expression property: (private_property_identifier) @ref)
(member_expression object: (identifier) @object)
(binary_expression operator: "instanceof" right: (identifier) @ref)
(import_specifier name: (identifier) @ref)
(import_clause (identifier) @ref)
(namespace_import (identifier) @ref)
(export_specifier name: (identifier) @ref)
(decorator (identifier) @ref)
(extends_clause value: (identifier) @ref)
(jsx_opening_element name: (identifier) @call)
(jsx_self_closing_element name: (identifier) @call)
(jsx_opening_element name: (member_expression property: (property_identifier) @call))
(jsx_self_closing_element name: (member_expression property: (property_identifier) @call))
(type_identifier) @ref
(nested_type_identifier module: (identifier) @ref)

; Base classes and interfaces (`extends`, `implements`).
(extends_clause value: [(identifier) (member_expression)] @base)
(implements_clause [(type_identifier) (nested_type_identifier)] @base)
(implements_clause (generic_type name: [(type_identifier) (nested_type_identifier)] @base))
(extends_type_clause [(type_identifier) (nested_type_identifier)] @base)
(extends_type_clause (generic_type name: [(type_identifier) (nested_type_identifier)] @base))

; Imports (`import ... from`, `require`: `bot.symbols.imports`).
(import_statement) @import
((variable_declarator value: (call_expression function: (identifier) @_require)) @import (#eq? @_require "require"))
((variable_declarator value: (member_expression object: (call_expression function: (identifier) @_required))) @import (#eq? @_required "require"))
; Names bound without a definition (`bot.symbols.exports`): export statements, top-level
; declarations and member assignments (`exports.x = ...`, `module.exports = {...}`), a
; member assigned an imported name anywhere (`ky.stop = stop`), computed members (`ky[m] =`,
; made in a loop over names).
(program (export_statement) @export)
(program [(lexical_declaration) (variable_declaration)] @export)
(program (expression_statement (assignment_expression left: (member_expression))) @export)
(assignment_expression left: (member_expression object: (identifier)) right: [(identifier) (member_expression)]) @export
(assignment_expression left: (subscript_expression index: (identifier))) @loop
; Declarations whose type the code states (`bot.symbols.bindings`): typed parameters,
; variables and fields, `new Foo()` and calls, `this.x = new Foo()`.
[(required_parameter) (optional_parameter)] @bind
(variable_declarator type: (_)) @bind
(variable_declarator value: [(new_expression) (call_expression) (as_expression)]) @bind
(public_field_definition) @bind
(assignment_expression left: (member_expression object: (this)) right: (new_expression)) @bind
