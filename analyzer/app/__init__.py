"""The pipeline, configuration, baselines and the command line."""
