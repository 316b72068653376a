"""Source code as codecite reads it, below ingest and the symbol table (it imports neither).

- `registry`: the tree-sitter languages, one `Language` record each (file
  names, grammar wheel, chunk rules, reference rules); `queries/<name>.scm`:
  each one's definition and reference query.
- `languages`: `language_for(path)`, for those and the file types not parsed.
- `parsers`, `parse`: grammars loaded once, one parse per file (`Parsed`).
- `grammars`: chunk rules, what a definition is per language family.
- `chunking`: a file cut into spans along definitions, headings or windows.
- `lines`: line tables with character and byte offsets.
"""
