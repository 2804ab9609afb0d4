// TODO: implemented by the shim work.
int main() { return 0; }
