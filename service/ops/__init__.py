"""Operations: metrics, structured logs and the server's settings."""
