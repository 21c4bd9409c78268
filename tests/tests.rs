mod redact;
