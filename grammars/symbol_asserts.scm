; Deferred runtime asserts on size symbols in run_impl, always run:
;   `if (!(u0 <= 64L)) { throw std::runtime_error("Expected u0 <= 64 but received " + ...); }`
; and ties of one symbol to another, `if (!(s77 == u2)) { throw ...("Expected Eq(s77, u2) ..."); }`
(if_statement
  condition: (condition_clause
    value: (unary_expression
      operator: "!"
      argument: (parenthesized_expression
        (binary_expression
          left: (identifier) @symbol
          operator: ["<" "<=" ">" ">=" "=="] @operator
          right: (_) @limit))))
  consequence: (compound_statement (throw_statement))) @assert
