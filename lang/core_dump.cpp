// SKELETON: replaced by its owner during initial development.
