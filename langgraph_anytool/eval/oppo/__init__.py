"""OPPO evaluation: data, agent, judge, prompts, scores, the eight tasks."""
