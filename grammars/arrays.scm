; Size and stride arrays in run_impl: `const int64_t int_array_12[] = {2L, 2L, s27, 32L};`
; (also `static constexpr int64_t int_array_2[] = {2L, 1L};`).
(declaration
  declarator: (init_declarator
    declarator: (array_declarator
      declarator: (identifier) @name)
    value: (initializer_list) @value)) @declaration
