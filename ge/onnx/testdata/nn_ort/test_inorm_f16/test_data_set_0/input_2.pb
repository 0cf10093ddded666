
BBJ¾µP6F>