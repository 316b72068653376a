; JavaScript (with JSX) definitions and references for codecite's symbol table.
; One pattern per line; lines starting with ';' are comments. Captures are
; described in bot/code/queries/__init__.py.

; Definitions: the node types of the chunk rules' tables (`kinds`, `wrappers`),
; then shapes their `special` hook accepts; the rules have the last word, so
; a pattern here may only ever match more.
[(function_declaration) (generator_function_declaration) (class_declaration) (method_definition)] @def
(export_statement) @def
(lexical_declaration (variable_declarator value: [(arrow_function) (function_expression) (generator_function) (class)])) @def
(variable_declaration (variable_declarator value: [(arrow_function) (function_expression) (generator_function) (class)])) @def
(field_definition value: [(arrow_function) (function_expression) (generator_function) (class)]) @def
(expression_statement (assignment_expression right: [(arrow_function) (function_expression) (generator_function) (class)])) @def
; Definitions no chunk is made of (`bot.symbols.declarations`): objects a name holds
; and their function members, module-level constants.
(pair value: [(arrow_function) (function_expression) (generator_function) (object)]) @def
(program [(lexical_declaration) (variable_declaration)] @def)
(lexical_declaration (variable_declarator value: (object))) @def
(variable_declaration (variable_declarator value: (object))) @def
(expression_statement (assignment_expression right: (object))) @def

; References: calls, `new`, JSX elements, member names, imported and exported
; names, `extends` and `instanceof` operands, upper-case objects of a member
; access (@object). The base class is JavaScript's shape (`class_heritage`
; holds the name): a pattern a grammar cannot read would make the whole query
; fall back to compiling line by line (slow).
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
(class_heritage (identifier) @ref)
(jsx_opening_element name: (identifier) @call)
(jsx_self_closing_element name: (identifier) @call)
(jsx_opening_element name: (member_expression property: (property_identifier) @call))
(jsx_self_closing_element name: (member_expression property: (property_identifier) @call))

; Base classes (`class A extends B`).
(class_heritage [(identifier) (member_expression)] @base)

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
; Declarations whose type the code states (`bot.symbols.bindings`): `new Foo()` and calls.
(variable_declarator value: [(new_expression) (call_expression)]) @bind
(field_definition value: (new_expression)) @bind
(assignment_expression left: (member_expression object: (this)) right: (new_expression)) @bind
