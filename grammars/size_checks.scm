; check_input_N's size checks, each `if (...) { ... throw ...; }`:
;   `if (arg0_1_size[0] < 2)` (min), `if (arg0_1_size[0] > 64)` (max), `if (8 != arg0_1_size[1])`
;   (exact; also written `arg0_1_size[1] != 8`). @sizes is the `<input>_size` array.
(if_statement
  condition: (condition_clause
    value: (binary_expression
      left: (subscript_expression
        argument: (identifier) @sizes
        indices: (subscript_argument_list . (number_literal) @dim .))
      operator: ["<" ">" "!="] @operator
      right: (number_literal) @limit))
  (#match? @sizes "_size$")) @check
(if_statement
  condition: (condition_clause
    value: (binary_expression
      left: (number_literal) @limit
      operator: "!=" @operator
      right: (subscript_expression
        argument: (identifier) @sizes
        indices: (subscript_argument_list . (number_literal) @dim .))))
  (#match? @sizes "_size$")) @check
