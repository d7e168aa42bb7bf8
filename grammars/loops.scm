; C++ kernel loops: `for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(ks0); ...)`.
; The loop variable ranges over [start, extent): the extent of iteration variables.
(for_statement
  initializer: (declaration
    declarator: (init_declarator
      declarator: (identifier) @var
      value: (_) @start))
  condition: (binary_expression
    left: (identifier)
    operator: "<"
    right: (_) @extent)) @loop
