; Python definitions and references for codecite's symbol table.
; One pattern per line; lines starting with ';' are comments. Captures are
; described in bot/code/queries/__init__.py.

; Definitions: the node types of the chunk rules' tables (`kinds`, `wrappers`).
[(function_definition) (class_definition) (decorated_definition)] @def

; References (one node type, `identifier`, for every name): calls, attribute
; names (@member: a call when `(` follows), names in `import` statements (every
; dotted segment), decorators, annotations (`x: Foo`, `-> list[Bar]`), base
; classes and keyword bases (`metaclass=Meta`), `except` clauses and `raise E`.
; The class arguments of `isinstance`/`issubclass` are read from the tree at
; those calls only (a predicate here would cost more). An attribute's plain-name
; object is not captured (`os.path`: `os` is its import; `text.split()`: a
; variable).
(call function: (identifier) @call)
(attribute attribute: (identifier) @member)
(dotted_name (identifier) @ref)
(decorator (identifier) @ref)
(type (identifier) @ref)
(generic_type (identifier) @ref)
(class_definition superclasses: (argument_list (identifier) @ref))
(class_definition superclasses: (argument_list (keyword_argument value: (identifier) @ref)))
(except_clause value: [(identifier) @ref (tuple (identifier) @ref) (as_pattern . [(identifier) @ref (tuple (identifier) @ref)])])
(raise_statement (identifier) @ref)

; Imports (every import statement: `bot.symbols.python_links` reads them) and base
; classes as written (`App`, `sansio.Scaffold`, the `Generic` of `Generic[T]`).
[(import_statement) (import_from_statement)] @import
(class_definition superclasses: (argument_list [(identifier) (attribute)] @base))
(class_definition superclasses: (argument_list (subscript value: [(identifier) (attribute)] @base)))

; Declarations whose type the code states (`bot.symbols.bindings`): annotated parameters
; and names, `x = Foo()`, `self.x = Foo()`, `self.x = x`.
[(typed_parameter) (typed_default_parameter)] @bind
(assignment type: (_)) @bind
(assignment left: (identifier) right: (call)) @bind
(assignment left: (attribute) right: [(call) (identifier)]) @bind
; Names bound at the top of a module or class (`bot.symbols.exports`), and `setattr` in a
; loop over names (members made at run time).
(module (expression_statement (assignment left: (identifier))) @export)
(class_definition body: (block (expression_statement (assignment left: (identifier))) @export))
((call function: (identifier) @_setattr) @loop (#eq? @_setattr "setattr"))
