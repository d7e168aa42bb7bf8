"""Index-bound rules: assertions whose bound or index comes from a model input dimension.

Placeholder: the rule writer fills this module (each rule registered with `@register`).
"""
