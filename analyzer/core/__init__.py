"""Records and services every layer shares: findings, the linked model, wording, budgets, escaping."""
