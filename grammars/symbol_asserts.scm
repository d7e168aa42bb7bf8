; Deferred runtime asserts on size symbols in run_impl, always run:
;   `if (!(u0 <= 64L)) { throw std::runtime_error("Expected u0 <= 64 but received " + ...); }`
(if_statement
  condition: (condition_clause
    value: (unary_expression
      operator: "!"
      argument: (parenthesized_expression
        (binary_expression
          left: (identifier) @symbol
          operator: ["<" "<=" ">" ">="] @operator
          right: (_) @limit))))
  consequence: (compound_statement (throw_statement))) @assert
