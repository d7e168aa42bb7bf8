"""Package discovery: every package under analyzer/ is found, and the query files of the top-level
grammars/ folder ship inside the wheel as analyzer.grammars (pyproject.toml alone cannot map a
folder outside the package tree while also discovering the rest)."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["analyzer", "analyzer.*"]), "analyzer.grammars"],
    package_dir={"analyzer.grammars": "grammars"},
)
