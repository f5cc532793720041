"""Process hosting: runtime, HTTP server, pid file, address, signals, logs and worker hosts."""
