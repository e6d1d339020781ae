// SKELETON: replaced by its owner during initial development.
int main() { return 0; }
