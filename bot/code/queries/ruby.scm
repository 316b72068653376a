; Ruby definitions and references for codecite's symbol table.
; One pattern per line; lines starting with ';' are comments. Captures are
; described in bot/code/queries/__init__.py.

; Definitions: the node types of the chunk rules' tables (`kinds`, `wrappers`).
[(module) (class) (method) (singleton_method)] @def

; References: every constant (classes, modules), every method call; `X.new`
; calls `X`.
(call method: (identifier) @call)
(call method: (constant) @call)
(call receiver: (constant) @call method: (identifier) @_new (#eq? @_new "new"))
(constant) @ref

; Superclass (`class A < B`).
(superclass [(constant) (scope_resolution)] @base)
