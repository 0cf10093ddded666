B
data_inputJ0}÷º¾Øî¦>oÈ=˜ûÀmðÀ‹oK?~ë?CEñ¿¿ØF¿«V7¼oïz¿T3@