; Ruby definitions and references for codecite's symbol table.
; One pattern per line; lines starting with ';' are comments. Captures are
; described in bot/code/queries/__init__.py.

; Definitions: the node types of the chunk rules' tables (`kinds`, `wrappers`).
[(module) (class) (method) (singleton_method)] @def
; Methods named by `define_method(:x)` and `attr_*` (`bot.symbols.declarations`).
(call method: (identifier) @_definer arguments: (argument_list (simple_symbol) @def) (#match? @_definer "^(define_method|attr_reader|attr_writer|attr_accessor)$"))

; References: every constant (classes, modules), every method call; `X.new`
; calls `X`.
(call method: (identifier) @call)
(call method: (constant) @call)
(call receiver: (constant) @call method: (identifier) @_new (#eq? @_new "new"))
(constant) @ref

; Superclass (`class A < B`).
(superclass [(constant) (scope_resolution)] @base)

; Constants listing names (`VERBS = %w[get post]`) and methods defined in a loop over names
; (`VERBS.each { |v| define_method(v) { ... } }`): `bot.symbols.exports`.
(assignment left: (constant) right: [(string_array) (array) (call receiver: (string_array))]) @export
((call method: (identifier) @_define) @loop (#eq? @_define "define_method"))
