"""Great Expectations suites and the Dagster asset checks that run them."""
