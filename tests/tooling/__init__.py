"""The tools around the product: the deploy bundles, the schema file, the stack's lifecycle,
make up, demo, bench and chaos, and the documents."""
