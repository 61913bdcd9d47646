"""Use cases: acting in a game, the turns that are due (bots and turn timeouts), the job queue, the read side."""
