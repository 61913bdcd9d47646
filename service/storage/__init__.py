"""Storage: the event store on Redis Streams, packed games, snapshots, the game indexes and the Redis clients."""
