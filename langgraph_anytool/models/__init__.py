"""Role resolution and every model call (`llm.call_role`), the transport guard, content faults, prompt fitting, model profiles, and the scripted test models (`models.testing`)."""
